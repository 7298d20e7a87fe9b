// The one connection policy every listener shares: caps in all and per address group (IPv6 by /64), and for
// sockets that have not yet proven who they are a bounded share whose oldest member is closed for a newcomer.
import type { Socket } from 'node:net';

export interface SlotLimits {
  /** Connections at once, in all. */
  max: number;
  /** From one address group (IPv4 address, IPv6 /64). */
  perGroup: number;
  /** Connections not yet proven (at most `max`): the pool a newcomer may take the oldest slot of. */
  unproven: number;
}

/**
 * The bookkeeping of the policy, by any key (a socket; the `--workers` primary's worker and connection number).
 * Proven members are never closed for a newcomer: with every slot of a full cap proven, the newcomer is refused.
 */
export class SlotTable<K> {
  private readonly slots = new Map<K, { group: string; proven: boolean }>();
  /** Oldest first (a Set keeps insertion order): who makes room when a newcomer needs it. */
  private readonly unproven = new Set<K>();
  private readonly groups = new Map<string, Set<K>>();

  constructor(private readonly limits: SlotLimits) {}

  /**
   * Takes `key` from `group`, unproven: the keys released to make room for it (their owner closes them), or
   * null when it is refused. A full group gives up its own oldest unproven member, so one host's flood churns
   * through its own share; a full table or unproven pool gives up the oldest unproven member of all, so a
   * newcomer that proves itself within `unproven` arrivals of others stays, however fast they come.
   */
  admit(key: K, group: string): K[] | null {
    const evicted: K[] = [];
    const members = this.groups.get(group);
    if (members !== undefined && members.size >= this.limits.perGroup) {
      const oldest = this.oldestUnproven(members);
      if (oldest === undefined) return null;
      evicted.push(oldest);
    }
    if (
      this.slots.size - evicted.length >= this.limits.max ||
      this.unproven.size - evicted.length >= this.limits.unproven
    ) {
      const oldest = this.oldestUnproven(this.unproven, evicted[0]);
      if (oldest === undefined) return null;
      evicted.push(oldest);
    }
    for (const key of evicted) this.release(key);
    this.slots.set(key, { group, proven: false });
    this.unproven.add(key);
    const after = this.groups.get(group);
    if (after === undefined) this.groups.set(group, new Set([key]));
    else after.add(key);
    return evicted;
  }

  /** `key` proved who it is: it leaves the unproven pool and is never closed for a newcomer. */
  prove(key: K): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined || slot.proven) return false;
    slot.proven = true;
    this.unproven.delete(key);
    return true;
  }

  release(key: K): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    this.unproven.delete(key);
    const members = this.groups.get(slot.group);
    members?.delete(key);
    if (members?.size === 0) this.groups.delete(slot.group);
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  isProven(key: K): boolean {
    return this.slots.get(key)?.proven === true;
  }

  get size(): number {
    return this.slots.size;
  }

  get unprovenSize(): number {
    return this.unproven.size;
  }

  keys(): IterableIterator<K> {
    return this.slots.keys();
  }

  unprovenKeys(): IterableIterator<K> {
    return this.unproven.values();
  }

  private oldestUnproven(among: Set<K>, except?: K): K | undefined {
    for (const key of among) if (key !== except && this.slots.get(key)?.proven === false) return key;
    return undefined;
  }
}

/** Why a socket was closed by the policy: it arrived over a full cap of proven members, or made room for one. */
export type ClosedReason = 'refused' | 'evicted';

export interface ConnectionSlotsOptions {
  /** A client address's group (address-group.ts: IPv4 by address, IPv6 by /64). */
  groupOf: (address: string) => string;
  /**
   * `serve --workers`: told of each socket kept here, so the caps hold across workers (the primary may close it:
   * the worker destroys it, calling `closed` first); returns how to tell the primary that it proved itself.
   */
  shared?: (socket: Socket, group: string, closed: (reason: ClosedReason) => void) => () => void;
}

/** What a listener is told of its socket closed by the policy (before it is destroyed): for its count and log. */
export type ClosedHook = (socket: Socket, group: string, reason: ClosedReason) => void;

/**
 * The sockets of every listener that shares the table under the policy (the daemon's HTTPS and syslog listeners
 * share one: a host flooding both holds no more than one cap): admitted at `connection`, proven by their
 * listener, released on close.
 */
export class ConnectionSlots {
  private readonly table: SlotTable<Socket>;
  private readonly sharedProof = new Map<Socket, () => void>();
  /** The hook of each socket whose listener gave one: a newcomer on one listener may close another's socket. */
  private readonly closedHooks = new Map<Socket, ClosedHook>();

  constructor(
    limits: SlotLimits,
    private readonly hooks: ConnectionSlotsOptions,
  ) {
    this.table = new SlotTable(limits);
  }

  /**
   * Takes a new socket (true), making room as the table says, or destroys it (false). `closed`: told when the
   * policy closes this socket, now or later (its listener's count and log).
   */
  admit(socket: Socket, closed?: ClosedHook): boolean {
    const group = this.hooks.groupOf(socket.remoteAddress ?? '');
    const evicted = this.table.admit(socket, group);
    if (evicted === null) {
      closed?.(socket, group, 'refused');
      socket.destroy();
      return false;
    }
    for (const old of evicted) {
      this.sharedProof.delete(old);
      this.closedHooks.get(old)?.(old, this.hooks.groupOf(old.remoteAddress ?? ''), 'evicted');
      this.closedHooks.delete(old);
      old.destroy();
    }
    if (closed) this.closedHooks.set(socket, closed);
    socket.once('close', () => {
      this.table.release(socket);
      this.sharedProof.delete(socket);
      this.closedHooks.delete(socket);
    });
    if (this.hooks.shared)
      this.sharedProof.set(
        socket,
        this.hooks.shared(socket, group, (reason) => closed?.(socket, group, reason)),
      );
    return true;
  }

  /**
   * `socket` proved who it is (a TLS socket counts for the TCP socket under it): it is no longer closed to make
   * room for a newcomer.
   */
  prove(socket: Socket): void {
    const held = this.heldAs(socket);
    if (held === null || !this.table.prove(held)) return;
    this.sharedProof.get(held)?.();
    this.sharedProof.delete(held);
  }

  /** Whether `socket` (or the TCP socket under it) holds a slot and proved itself. */
  isProven(socket: Socket): boolean {
    const held = this.heldAs(socket);
    return held !== null && this.table.isProven(held);
  }

  get open(): number {
    return this.table.size;
  }

  destroyAll(): void {
    for (const socket of [...this.table.keys()]) socket.destroy();
  }

  /** The socket holding the slot: `socket`, or for a TLS socket the TCP socket under it (node:tls's `_parent`). */
  private heldAs(socket: Socket): Socket | null {
    if (this.table.has(socket)) return socket;
    const parent = (socket as { _parent?: Socket | null })._parent;
    return parent && this.table.has(parent) ? parent : null;
  }

  /** Closes the sockets that have not proven themselves (a listener shutting down waits for no handshake). */
  destroyUnproven(): void {
    for (const socket of [...this.table.unprovenKeys()]) socket.destroy();
  }
}

/**
 * The table the daemon's sensor-facing listeners share (HTTPS, syslog TLS, TCP, RELP) at the configured caps:
 * `maxConnections` in all, `maxConnectionsPerAddress` per address group, every slot open to a newcomer that has
 * not proven itself yet. The admin listener keeps a small table of its own (admin-connections.ts): a flood of the
 * sensors' ports must not lock the operator out of the dashboard.
 */
export function listenerSlots(
  server: { maxConnections: number; maxConnectionsPerAddress: number },
  options: ConnectionSlotsOptions,
): ConnectionSlots {
  return new ConnectionSlots(
    {
      max: server.maxConnections,
      perGroup: server.maxConnectionsPerAddress,
      unproven: server.maxConnections,
    },
    options,
  );
}
