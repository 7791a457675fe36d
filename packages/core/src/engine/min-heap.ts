/** A binary min-heap: O(log n) push and pop, O(1) peek. */
export class MinHeap<T> {
  private items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.less(a[i]!, a[parent]!) >= 0) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      this.sink(0);
    }
    return top;
  }

  clear(): void {
    this.items = [];
  }

  /** Drops the items that match and restores the heap (O(n)). */
  removeWhere(fn: (item: T) => boolean): number {
    const before = this.items.length;
    this.items = this.items.filter((x) => !fn(x));
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.sink(i);
    return before - this.items.length;
  }

  private sink(i: number): void {
    const a = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.less(a[l]!, a[m]!) < 0) m = l;
      if (r < a.length && this.less(a[r]!, a[m]!) < 0) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}
