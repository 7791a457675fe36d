// Masking of secrets in what a run produced (results, logs, bodies, screenshots): runners and the engine both use it.
export const SCRUBBED = '********';

/** Secrets shorter than this are not masked: a value of one or two characters would shred the text. */
export const MIN_SCRUBBED_LENGTH = 3;

/**
 * The base64 (and base64url) characters that encode only the secret's own bytes, at each of the
 * three byte offsets it may start at inside a longer encoded value (`Basic base64(user:secret)`,
 * a token that embeds it). Only cores of 2 groups (8 characters) or more, so that short runs that
 * could occur anywhere are left alone.
 */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (const encoding of ['base64', 'base64url'] as const) {
    for (let lead = 0; lead < 3; lead++) {
      const encoded = Buffer.concat([Buffer.alloc(lead), bytes]).toString(encoding);
      const first = Math.ceil(lead / 3);
      const last = Math.floor((lead + bytes.length) / 3) - 1;
      if (last - first + 1 >= 2) out.push(encoded.slice(first * 4, (last + 1) * 4));
    }
  }
  return out;
}

/** One character as a URL's path, query and userinfo hold it (WHATWG URL, as `new URL` and its setters write it). */
const urlChars = new Map<string, readonly [string, string, string]>();
function urlChar(ch: string): readonly [string, string, string] {
  let known = urlChars.get(ch);
  if (!known) {
    // `?` and `#` end a path, `#` a query: a secret holding them stands in the URL as written, cut in two.
    const path = ch === '?' || ch === '#' ? ch : new URL(`http://x/a${ch}b`).pathname.slice(2, -1);
    const query = ch === '#' ? ch : new URL(`http://x/?a${ch}b`).search.slice(2, -1);
    const user = new URL('http://x/');
    user.password = `a${ch}b`;
    known = [path, query, user.password.slice(1, -1)] as const;
    if (urlChars.size > 10_000) urlChars.clear();
    urlChars.set(ch, known);
  }
  return known;
}

/** A secret in a URL's path, its query (written in the URL or set as `url.search`) and its userinfo. */
function urlForms(secret: string): string[] {
  let path = '';
  let query = '';
  let user = '';
  for (const ch of secret) {
    const [p, q, u] = urlChar(ch);
    path += p;
    query += q;
    user += u;
  }
  return [path, query, user];
}

const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());

/**
 * The forms a secret may take in text a run produced: as is, URL-encoded (encodeURIComponent, a
 * URL's path, query and userinfo as WHATWG URL writes them, form encoding; either case of hex),
 * JSON-escaped; and base64 (whole, or inside a longer encoded value), which is masked together with
 * the rest of the encoded value around it (`Basic base64(user:secret)` becomes `Basic ********`),
 * since what is left of it would decode to bytes of the secret's neighbours. Base64 forms that were
 * themselves URL-encoded or JSON-escaped (`\/`) are masked as they stand.
 */
function forms(secret: string, json: boolean): { literal: string[]; encoded: string[] } {
  const bytes = Buffer.from(secret);
  const literal = new Set([secret, new URLSearchParams({ x: secret }).toString().slice(2)]);
  for (const form of [encodeURIComponent(secret), ...urlForms(secret)]) {
    literal.add(form);
    literal.add(lowerHex(form));
  }
  if (json) literal.add(JSON.stringify(secret).slice(1, -1));
  const encoded = new Set([bytes.toString('base64'), ...base64Cores(bytes)]);
  for (const form of encoded) {
    const escaped = encodeURIComponent(form);
    if (escaped !== form) {
      literal.add(escaped);
      literal.add(lowerHex(escaped));
    }
    if (form.includes('/')) literal.add(form.replaceAll('/', '\\/'));
  }
  const nonEmpty = (set: Set<string>) => [...set].filter((f) => f.length > 0);
  return { literal: nonEmpty(literal), encoded: nonEmpty(encoded) };
}

const isBase64Char = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47 || code === 95 || code === 45;

/** Characters of a form's start the matcher's trie holds; the rest of a longer form is compared where its start is found. */
const PREFIX = 32;

/**
 * Every form of many secrets looked for in one pass over a text (Aho–Corasick): a trie of the
 * forms' first PREFIX characters with failure links, so that a text is read once whatever the
 * number of forms, and a form whose start is found there is compared in full.
 */
class FormMatcher {
  /** Per state: the char code of its only child (-1: none, -2: several, in `branches`), and that child. */
  private readonly onlyChar: number[] = [-1];
  private readonly onlyChild: number[] = [0];
  private readonly branches = new Map<number, Map<number, number>>();
  private readonly depth: number[] = [0];
  private readonly fail: number[] = [0];
  /** The forms (indexes in `forms`) whose start a state's string is, and per state the nearest state down its failure links (itself too) that has some. */
  private readonly ends = new Map<number, number[]>();
  private readonly outLink: number[] = [-1];
  private readonly forms: { text: string; encoded: boolean }[] = [];

  constructor(literal: Iterable<string>, encoded: Iterable<string>) {
    for (const text of literal) this.add({ text, encoded: false });
    for (const text of encoded) this.add({ text, encoded: true });
    this.link();
  }

  private add(form: { text: string; encoded: boolean }): void {
    const state = this.insert(form.text.slice(0, PREFIX));
    const list = this.ends.get(state) ?? [];
    list.push(this.forms.length);
    this.ends.set(state, list);
    this.forms.push(form);
  }

  private child(state: number, code: number): number {
    const only = this.onlyChar[state]!;
    if (only === code) return this.onlyChild[state]!;
    return only === -2 ? (this.branches.get(state)!.get(code) ?? -1) : -1;
  }

  private insert(prefix: string): number {
    let state = 0;
    for (let i = 0; i < prefix.length; i++) {
      const code = prefix.charCodeAt(i);
      let next = this.child(state, code);
      if (next < 0) {
        next = this.depth.length;
        this.onlyChar.push(-1);
        this.onlyChild.push(0);
        this.depth.push(this.depth[state]! + 1);
        this.fail.push(0);
        this.outLink.push(-1);
        const only = this.onlyChar[state]!;
        if (only === -1) {
          this.onlyChar[state] = code;
          this.onlyChild[state] = next;
        } else {
          if (only !== -2) {
            this.branches.set(state, new Map([[only, this.onlyChild[state]!]]));
            this.onlyChar[state] = -2;
          }
          this.branches.get(state)!.set(code, next);
        }
      }
      state = next;
    }
    return state;
  }

  private children(state: number): Iterable<[number, number]> {
    const only = this.onlyChar[state]!;
    if (only === -1) return [];
    return only === -2 ? this.branches.get(state)! : [[only, this.onlyChild[state]!]];
  }

  /** The state after `code` from `state`, following failure links. */
  private step(state: number, code: number): number {
    for (;;) {
      const next = this.child(state, code);
      if (next >= 0) return next;
      if (state === 0) return 0;
      state = this.fail[state]!;
    }
  }

  /** Failure links breadth first, and with them each state's link to the form starts that end its string. */
  private link(): void {
    const queue: number[] = [];
    for (const [, child] of this.children(0)) queue.push(child);
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      const fail = this.fail[state]!;
      this.outLink[state] = this.ends.has(state) ? state : this.outLink[fail]!;
      for (const [code, child] of this.children(state)) {
        this.fail[child] = state === 0 ? 0 : this.step(fail, code);
        queue.push(child);
      }
    }
  }

  /** The places to mask in `text`: each literal form found, each encoded form grown over the encoded value around it. */
  ranges(text: string): [number, number][] {
    const ranges: [number, number][] = [];
    // Per encoded form, where its search goes on: an encoded value is masked whole, and searched on after it.
    const from = new Map<number, number>();
    // The runs of base64 characters last grown over, backward and forward, so that a long run is walked once.
    const back: [number, number] = [-1, -1];
    const ahead: [number, number] = [-1, -1];
    const runOf = (at: number, cache: [number, number]): [number, number] => {
      if (at < cache[0] || at >= cache[1]) {
        let start = at;
        while (start > 0 && isBase64Char(text.charCodeAt(start - 1))) start--;
        let end = at + 1;
        while (end < text.length && isBase64Char(text.charCodeAt(end))) end++;
        cache[0] = start;
        cache[1] = end;
      }
      return cache;
    };
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      state = this.step(state, text.charCodeAt(i));
      for (let s = this.outLink[state]!; s >= 0; s = this.outLink[this.fail[s]!]!) {
        const at = i + 1 - this.depth[s]!;
        for (const index of this.ends.get(s)!) {
          const form = this.forms[index]!;
          if (form.text.length > PREFIX && !text.startsWith(form.text, at)) continue;
          if (!form.encoded) {
            ranges.push([at, at + form.text.length]);
            continue;
          }
          if (at < (from.get(index) ?? 0)) continue;
          const last = at + form.text.length;
          const start = at > 0 && isBase64Char(text.charCodeAt(at - 1)) ? runOf(at - 1, back)[0] : at;
          let end = last < text.length && isBase64Char(text.charCodeAt(last)) ? runOf(last, ahead)[1] : last;
          while (end < text.length && text.charCodeAt(end) === 61 /* = */) end++;
          ranges.push([start, end]);
          from.set(index, end);
        }
      }
    }
    return ranges;
  }
}

/** Masks the ranges found in `text`, ranges that overlap or touch masked as one. */
function mask(text: string, ranges: [number, number][]): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  let current = ranges[0]!;
  const flush = (range: [number, number]) => {
    out += text.slice(at, range[0]) + SCRUBBED;
    at = range[1];
  };
  for (const range of ranges.slice(1)) {
    if (range[0] <= current[1]) current = [current[0], Math.max(current[1], range[1])];
    else {
      flush(current);
      current = range;
    }
  }
  flush(current);
  return out + text.slice(at);
}

/**
 * A function that scrubs texts of `secrets`: every form of every secret is computed once, and
 * looked for in one pass over each text (see scrubSecrets).
 */
export function secretScrubber(secrets: readonly string[], json = false): (text: string) => string {
  const literal = new Set<string>();
  const encoded = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SCRUBBED_LENGTH) continue;
    const f = forms(secret, json);
    for (const form of f.literal) literal.add(form);
    for (const form of f.encoded) encoded.add(form);
  }
  if (literal.size === 0 && encoded.size === 0) return (text) => text;
  const matcher = new FormMatcher(literal, encoded);
  return (text) => mask(text, matcher.ranges(text));
}

/** The scrubbers last built, by the list they were built for, kept while the list stays the same. */
const built = new WeakMap<readonly string[], { snapshot: string[]; json: boolean; scrub: (text: string) => string }[]>();
function scrubberFor(secrets: readonly string[], json: boolean): (text: string) => string {
  const kept = built.get(secrets) ?? [];
  const same = kept.find((k) => k.json === json && k.snapshot.length === secrets.length && k.snapshot.every((s, i) => s === secrets[i]));
  if (same) return same.scrub;
  const scrub = secretScrubber(secrets, json);
  built.set(secrets, [...kept.filter((k) => k.json !== json), { snapshot: [...secrets], json, scrub }]);
  return scrub;
}

/**
 * Replaces every secret value in `text` (in each of its forms) with a mask. Every form of every
 * secret is looked for in the text as given and the places found are masked together, so one
 * secret's mask cannot hide another's form from the search; a base64 form's place grows over the
 * encoded value around it. One pass over the text for all forms.
 */
export function scrubSecrets(text: string, secrets: readonly string[], json = false): string {
  if (secrets.length === 0) return text;
  return scrubberFor(secrets, json)(text);
}

/** A copy of `value` with every string in it scrubbed (JSON-escaped forms too); numbers and booleans stay as they are. */
export function scrubDeep<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const scrub = scrubberFor(secrets, true);
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return scrub(x);
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === 'object') {
      return Object.fromEntries(Object.entries(x).map(([k, inner]) => [k, walk(inner)]));
    }
    return x;
  };
  return walk(value) as T;
}
