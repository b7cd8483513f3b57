// Which request of a panel still matters: each new ask, or a clear, replaces the ones before,
// so an answer that arrives after its ask was replaced is dropped rather than shown over the
// newer one (a cached answer can overtake a computed one; a table can change meanwhile).

export class Latest {
  #asks = 0;

  /** A new ask; the function returned says whether it is still the latest. */
  ask() {
    const ask = ++this.#asks;
    return () => ask === this.#asks;
  }

  /** Replace every ask so far: their answers are no longer wanted. */
  drop() {
    this.#asks += 1;
  }
}
