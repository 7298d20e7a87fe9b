// The admin listener's connection slots: the one connection policy (connection-slots.ts) at the admin listener's
// sizes, where a socket proves itself by an authorised request, so idle or unauthorised sockets cannot lock out
// a token holder.
import { addressGroup } from '../address-group.js';
import { ConnectionSlots } from '../connection-slots.js';

/** Sockets at once; the event streams among them have their own cap (dashboard-routes.ts, 16). */
export const ADMIN_MAX_CONNECTIONS = 64;
/** From one address (IPv6: one /64): a browser holds up to 6, a load balancer 1-2. */
export const ADMIN_MAX_PER_ADDRESS = 16;
/** Sockets that have not yet sent an authorised request (the token, or without one an allowed Host). */
export const ADMIN_MAX_UNPROVEN = 32;

export class AdminConnections extends ConnectionSlots {
  constructor() {
    super(
      { max: ADMIN_MAX_CONNECTIONS, perGroup: ADMIN_MAX_PER_ADDRESS, unproven: ADMIN_MAX_UNPROVEN },
      { groupOf: addressGroup },
    );
  }
}
