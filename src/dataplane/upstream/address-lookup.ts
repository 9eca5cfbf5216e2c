// How the data plane resolves a name it only learns per request (a dynamic forward proxy's
// destination): every address of the name, in the resolver's order. The system resolver (node's
// dns.lookup: /etc/hosts, then DNS) unless the data plane is given another (tests).
import { lookup } from 'node:dns/promises';

/** Resolves a name to its addresses; rejects when it has none or cannot be resolved. */
export type AddressLookup = (host: string) => Promise<readonly string[]>;

export const systemLookup: AddressLookup = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
