import { fromFieldStats, type FieldStats, type SketchBins, type Stats } from './sketch.js';

/**
 * A roll-up's stats as one binary value (the `stats` column), about a quarter the size of their JSON:
 *
 *   version (1)
 *   per field: field byte (its place in FIELDS, plus one; 0: the name follows as length and UTF-8)
 *              n · sum · m2 · min · max · zero count · positive bins · negative bins
 *
 * Counts are unsigned LEB128 varints. A number that is a whole count of hundredths (as timings
 * are) is a varint of its zigzagged hundredths times two; any other is a varint 1 and a float64.
 * Bins are their count of pairs, the first key zigzagged and its count, then per bin one varint of its key's step from the one
 * before times 8 plus its count (7: the count is 7 plus a varint that follows).
 */
const VERSION = 1;

/** Fields written as one byte. Append only: stored values name fields by their place here. */
const FIELDS = ['responseTime', 'attempts', 'total', 'dns', 'connection', 'data', 'wait', 'tcp', 'tls', 'firstByte', 'download', 'setup', 'script'];
const FIELD_INDEX = new Map(FIELDS.map((f, i) => [f, i + 1]));

const zigzag = (k: number) => (k >= 0 ? 2 * k : -2 * k - 1);
const unzigzag = (z: number) => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
/** Hundredths that fit a varint with room for the zigzag and the tag. */
const MAX_HUNDREDTHS = 2 ** 50;

class Writer {
  private buf = Buffer.alloc(256);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  varint(v: number): void {
    this.room(8);
    while (v >= 128) {
      this.buf[this.at++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    this.buf[this.at++] = v;
  }

  num(v: number): void {
    const k = Math.round(v * 100);
    // Sums of hundredths drift by float rounding: a value within a billionth of its hundredths is them.
    if (Math.abs(k) < MAX_HUNDREDTHS && Math.abs(k / 100 - v) <= 1e-9 * Math.max(1, Math.abs(v))) return this.varint(zigzag(k) * 2);
    this.varint(1);
    this.room(8);
    this.at = this.buf.writeDoubleLE(v, this.at);
  }

  bins(list: number[]): void {
    this.varint(list.length / 2);
    for (let i = 0; i < list.length; i += 2) {
      const count = Math.round(list[i + 1]!);
      if (i === 0) {
        this.varint(zigzag(list[0]!));
        this.varint(count);
        continue;
      }
      // A step and a count under 7 share a byte when the step is under 16 (most bins of an hour).
      this.varint((list[i]! - list[i - 2]!) * 8 + Math.min(count, 7));
      if (count >= 7) this.varint(count - 7);
    }
  }

  name(field: string): void {
    const index = FIELD_INDEX.get(field);
    if (index !== undefined) return this.varint(index);
    const bytes = Buffer.from(field, 'utf8');
    this.varint(0);
    this.varint(bytes.length);
    this.room(bytes.length);
    this.at += bytes.copy(this.buf, this.at);
  }

  done = () => Buffer.from(this.buf.subarray(0, this.at));
}

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  get more(): boolean {
    return this.at < this.buf.length;
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new Error('A roll-up\'s stats end early: the value is damaged');
  }

  private byte(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      v += (b & 127) * scale;
      if (b < 128) return v;
      scale *= 128;
    }
  }

  num(): number {
    const tag = this.varint();
    if (tag % 2 === 0) return unzigzag(tag / 2) / 100;
    this.need(8);
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  bins(): number[] {
    const pairs = this.varint();
    const out: number[] = new Array(pairs * 2);
    let key = 0;
    for (let i = 0; i < pairs; i++) {
      let count: number;
      if (i === 0) {
        key = unzigzag(this.varint());
        count = this.varint();
      } else {
        const pair = this.varint();
        key += Math.floor(pair / 8);
        count = pair % 8;
        if (count === 7) count += this.varint();
      }
      out[2 * i] = key;
      out[2 * i + 1] = count;
    }
    return out;
  }

  name(): string {
    const index = this.varint();
    if (index > 0) return FIELDS[index - 1] ?? `field${index}`;
    const length = this.varint();
    this.need(length);
    const name = this.buf.toString('utf8', this.at, this.at + length);
    this.at += length;
    return name;
  }
}

export function encodeStats(stats: Record<string, Stats>): Buffer {
  const w = new Writer();
  w.varint(VERSION);
  for (const [field, s] of Object.entries(stats)) {
    w.name(field);
    w.varint(s.n);
    w.num(s.sum);
    w.num(s.m2);
    w.num(s.min);
    w.num(s.max);
    w.varint(Math.round(s.bins.zero));
    w.bins(s.bins.positive);
    w.bins(s.bins.negative);
  }
  return w.done();
}

export function decodeStats(value: Buffer | Uint8Array): Record<string, Stats> {
  const r = new Reader(Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  const version = r.varint();
  if (version !== VERSION) throw new Error(`A roll-up's stats are of version ${version}, which this Vigil does not read`);
  const out: Record<string, Stats> = {};
  while (r.more) {
    const field = r.name();
    const n = r.varint();
    const sum = r.num();
    const m2 = r.num();
    const min = r.num();
    const max = r.num();
    const bins: SketchBins = { zero: r.varint(), positive: r.bins(), negative: r.bins() };
    out[field] = { n, sum, m2, min, max, bins };
  }
  return out;
}

/**
 * The stats of a roll-up row: its binary `stats`, or the JSON `sketches` of a roll-up made before
 * those (migration 010 to 013), or null for one made before sketches were kept at all.
 */
export function rowStats(row: Record<string, unknown>): Record<string, Stats> | null {
  if (row.stats !== null && row.stats !== undefined) return decodeStats(row.stats as Buffer);
  if (row.sketches === null || row.sketches === undefined) return null;
  const json = JSON.parse(String(row.sketches)) as Record<string, FieldStats>;
  return Object.fromEntries(Object.entries(json).map(([field, s]) => [field, fromFieldStats(s)]));
}
