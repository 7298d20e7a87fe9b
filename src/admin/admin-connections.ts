// The admin listener's connection slots (issue 27 F1): a cap per client address group, and a share for sockets
// that have not yet sent an authorised request, so idle or unauthorised sockets cannot lock out a token holder.
import type { Socket } from 'node:net';
import { addressGroup } from '../address-group.js';

/** Sockets at once; the event streams among them have their own cap (dashboard-routes.ts, 16). */
export const ADMIN_MAX_CONNECTIONS = 64;
/** From one address (IPv6: one /64): a browser holds up to 6, a load balancer 1-2. */
export const ADMIN_MAX_PER_ADDRESS = 16;
/** Sockets that have not yet sent an authorised request (the token, or without one an allowed Host). */
export const ADMIN_MAX_UNPROVEN = 32;

interface Slot {
  group: string;
  proven: boolean;
}

export class AdminConnections {
  private readonly slots = new Map<Socket, Slot>();
  /** Oldest first (a Set keeps insertion order): who makes room when a newcomer needs it. */
  private readonly unproven = new Set<Socket>();
  private readonly groups = new Map<string, Set<Socket>>();

  /**
   * Takes a new socket, or destroys it. When its address group or the unproven share is full, the oldest
   * socket there that has not proven itself is closed instead: a flood of idle sockets keeps churning, and a
   * newcomer that sends the token at once (a load balancer's /readyz) gets in. Proven sockets are never
   * closed for a newcomer; with every slot proven the newcomer is refused.
   */
  admit(socket: Socket): void {
    const group = addressGroup(socket.remoteAddress ?? '');
    const members = this.groups.get(group);
    if (members !== undefined && members.size >= ADMIN_MAX_PER_ADDRESS && !this.evictOldest(members)) {
      socket.destroy();
      return;
    }
    if (
      (this.slots.size >= ADMIN_MAX_CONNECTIONS || this.unproven.size >= ADMIN_MAX_UNPROVEN) &&
      !this.evictOldest(this.unproven)
    ) {
      socket.destroy();
      return;
    }
    this.slots.set(socket, { group, proven: false });
    this.unproven.add(socket);
    if (members === undefined) this.groups.set(group, new Set([socket]));
    else members.add(socket);
    socket.once('close', () => this.release(socket));
  }

  /** The socket sent an authorised request: it no longer counts in the unproven share, nor makes room. */
  prove(socket: Socket): void {
    const slot = this.slots.get(socket);
    if (slot === undefined || slot.proven) return;
    slot.proven = true;
    this.unproven.delete(socket);
  }

  destroyAll(): void {
    for (const socket of [...this.slots.keys()]) socket.destroy();
  }

  /** Closes the oldest unproven socket of `among`; false when there is none. */
  private evictOldest(among: Set<Socket>): boolean {
    for (const socket of among) {
      if (this.slots.get(socket)?.proven === false) {
        // Released now, not on 'close': the newcomer's slot must exist before this returns.
        this.release(socket);
        socket.destroy();
        return true;
      }
    }
    return false;
  }

  private release(socket: Socket): void {
    const slot = this.slots.get(socket);
    if (slot === undefined) return;
    this.slots.delete(socket);
    this.unproven.delete(socket);
    const members = this.groups.get(slot.group);
    members?.delete(socket);
    if (members?.size === 0) this.groups.delete(slot.group);
  }
}
