// The budget of request-body bytes gw holds in memory while they arrive: one for the process and
// one per listener port, so that no mix of clients — many stalled uploads, on one port or on all —
// can make gw buffer more than a bounded amount. A body that has arrived whole is its request's and
// leaves the budget (its life is bounded by the route's deadlines); the budget is about what a
// client controls, the pace at which it sends.
//
// When a body's next bytes do not fit, the bodies that have been silent longest (at least
// EVICTABLE_IDLE_MS) are evicted to make room: their clients get 408 and the newcomer proceeds, so
// stalled uploads cannot keep active ones out. When nothing is evictable the newcomer is refused
// (503): under honest load beyond the budget, new work is shed rather than old work cut.
//
// The budgets only count; the reservations to evict are found where they already are, in the
// watchdogs' lists of bodies in flight (no second list of them to keep up on every request).

/** A body silent this long may be evicted when another needs its room. */
export const EVICTABLE_IDLE_MS = 2000;

interface Pool {
  used: number;
  readonly limit: number;
  /** The reservations in this pool (the candidates for eviction). */
  reservations(): Iterable<Reservation>;
}

/** One body's bytes in the budget. */
export class Reservation {
  bytes = 0;
  /** When bytes last arrived or were reserved (performance.now()). */
  lastGrowthAt = performance.now();
  private readonly listener: ListenerBudget;
  private readonly onEvicted: () => void;
  private released = false;

  constructor(listener: ListenerBudget, onEvicted: () => void) {
    this.listener = listener;
    this.onEvicted = onEvicted;
  }

  /** Takes `count` more bytes; false when they fit neither as they are nor after evicting silent bodies. */
  grow(count: number): boolean {
    if (this.released) return false;
    const listener = this.listener;
    const process = listener.process;
    if (listener.used + count > listener.limit && !evict(listener, count, this)) return false;
    if (process.used + count > process.limit && !evict(process, count, this)) return false;
    this.bytes += count;
    listener.used += count;
    process.used += count;
    this.lastGrowthAt = performance.now();
    return true;
  }

  /** Bytes arrived for what was reserved: the body is not silent. */
  touch(): void {
    this.lastGrowthAt = performance.now();
  }

  /** Gives the bytes back (the body is complete, refused or abandoned). Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const listener = this.listener;
    listener.used -= this.bytes;
    listener.process.used -= this.bytes;
    this.bytes = 0;
  }

  /** Released to make room for another body; its owner answers its client. */
  evict(): void {
    this.release();
    this.onEvicted();
  }
}

/** Evicts the longest-silent reservations of `pool` (other than `needing`) until `count` more bytes fit; false when they cannot. */
function evict(pool: Pool, count: number, needing: Reservation): boolean {
  if (count > pool.limit) return false;
  const silentSince = performance.now() - EVICTABLE_IDLE_MS;
  const silent: Reservation[] = [];
  for (const reservation of pool.reservations())
    if (reservation !== needing && reservation.bytes > 0 && reservation.lastGrowthAt <= silentSince)
      silent.push(reservation);
  silent.sort((a, b) => a.lastGrowthAt - b.lastGrowthAt);
  let available = pool.limit - pool.used;
  const victims: Reservation[] = [];
  for (const reservation of silent) {
    if (available >= count) break;
    available += reservation.bytes;
    victims.push(reservation);
  }
  if (available < count) return false;
  for (const victim of victims) victim.evict();
  return true;
}

export class BufferBudget implements Pool {
  used = 0;
  readonly limit: number;
  private readonly listeners = new Set<ListenerBudget>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * The budget of one listener port, within this one; `reservations` lists the port's (its
   * watchdog's bodies). `close` it with the port.
   */
  forListener(limit: number, reservations: () => Iterable<Reservation>): ListenerBudget {
    const listener = new ListenerBudget(this, limit, reservations, () => this.listeners.delete(listener));
    this.listeners.add(listener);
    return listener;
  }

  *reservations(): Iterable<Reservation> {
    for (const listener of this.listeners) yield* listener.reservations();
  }
}

export class ListenerBudget implements Pool {
  used = 0;
  readonly limit: number;
  readonly process: BufferBudget;
  readonly reservations: () => Iterable<Reservation>;
  readonly close: () => void;

  constructor(process: BufferBudget, limit: number, reservations: () => Iterable<Reservation>, close: () => void) {
    this.process = process;
    this.limit = limit;
    this.reservations = reservations;
    this.close = close;
  }

  /** A reservation for one body; `onEvicted` is called when it is evicted for another. */
  reserve(onEvicted: () => void): Reservation {
    return new Reservation(this, onEvicted);
  }
}
