// The reference engine's state: per service, the templates in their leaves (token count and leading
// token), the JSON shapes, the skeleton and leading-token indexes that find templates of other
// lengths, and the least-recently-used order; ids from one counter, never reused. Adding a template
// to a full leaf or a service at its cap evicts the least recently used one; retiring one reports it
// as evicted or merged. The fields its templates write as key=value are counted (a word after such a
// field's name is its value). assembly/logminer.ts keeps the same state in hash maps and a linked list.
import { LEAF_MAX, type CoreOutput } from './core.js';
import { fieldKey, headOf, skeletonOf, tokenKind, valuePositions, leafKeyOf } from './tokens.js';

export interface RefTemplate {
  id: number;
  /** use tick: last line matched (or creation / restore) */
  used: number;
  svc: number;
  json: boolean;
  leafKey: string;
  tokens: string[];
  kinds: number[];
  /** positions holding the value of a `key: value` pair (valuePositions) */
  values: boolean[];
  pattern: string;
  /** skeletonOf(tokens), '' for JSON */
  skel: string;
}

export interface RefService {
  leaves: Map<string, RefTemplate[]>;
  shapes: Map<string, RefTemplate>;
  /** live templates in least-recently-used-first order (Map iteration order) */
  lru: Map<number, RefTemplate>;
  /** skeleton → the template that holds it (the first one to) */
  skels: Map<string, RefTemplate>;
  /** leading-token key (headOf) → the text templates of any length under it, the LEAF_MAX latest added */
  heads: Map<string, RefTemplate[]>;
  /** field name (fieldKey) → how many tokens of live templates write it as key=value */
  fields: Map<string, number>;
}

/** A text template of tokens (kinds, value positions, pattern, leaf and skeleton derived from them). */
export function textTemplate(id: number, svc: number, tokens: string[], leafKey = leafKeyOf(tokens)): RefTemplate {
  const kinds = tokens.map(tokenKind);
  return { id, used: 0, svc, json: false, leafKey, tokens, kinds, values: valuePositions(tokens), pattern: tokens.join(' '), skel: skeletonOf(tokens, kinds) };
}

/** A JSON-shape template: matched by its shape alone. */
export function jsonTemplate(id: number, svc: number, shape: string): RefTemplate {
  return { id, used: 0, svc, json: true, leafKey: shape, tokens: [], kinds: [], values: [], pattern: shape, skel: '' };
}

export class TemplateStore {
  private readonly services: RefService[] = [];
  readonly byId = new Map<number, RefTemplate>();
  /** templates retired in the current batch: their patterns are still asked for */
  readonly evictedPending = new Map<number, RefTemplate>();
  /** merges still allowed in the current batch (the size of the output's retired arrays) */
  mergeBudget = 0;
  /** the next id to hand out */
  next = 1;
  private tick = 0;

  constructor(private readonly cap: number) {}

  /** A new batch: nothing retired yet, and room for n + LEAF_MAX merges. */
  startBatch(n: number): void {
    this.mergeBudget = n + LEAF_MAX;
    this.evictedPending.clear();
  }

  service(svc: number): RefService {
    let s = this.services[svc];
    if (!s) {
      s = { leaves: new Map(), shapes: new Map(), lru: new Map(), skels: new Map(), heads: new Map(), fields: new Map() };
      this.services[svc] = s;
    }
    return s;
  }


  liveCount(svc: number): number {
    return this.services[svc]?.lru.size ?? 0;
  }

  /** Counts (delta 1) or uncounts (-1) the fields text template t writes as key=value: around every change of its tokens. */
  countFields(s: RefService, t: RefTemplate, delta: number): void {
    for (const tok of t.tokens) {
      const f = fieldKey(tok);
      if (f === '') continue;
      const n = (s.fields.get(f) ?? 0) + delta;
      if (n > 0) s.fields.set(f, n);
      else s.fields.delete(f);
    }
  }

  touch(s: RefService, t: RefTemplate): void {
    s.lru.delete(t.id);
    s.lru.set(t.id, t);
    t.used = ++this.tick;
  }


  /**
   * Adds a template. A full leaf (LEAF_MAX templates: bounds the work per line) loses its least
   * recently used template; otherwise a service at the cap loses its least recently used one.
   */
  add(s: RefService, t: RefTemplate, out: CoreOutput | null): void {
    let victim: RefTemplate | undefined;
    const full = t.json ? undefined : s.leaves.get(t.leafKey);
    if (full && full.length >= LEAF_MAX) {
      victim = full[0]!;
      for (const c of full) if (c.used < victim.used) victim = c;
    } else if (s.lru.size >= this.cap) victim = s.lru.values().next().value as RefTemplate;
    if (victim) this.retire(s, victim, out, 0);
    s.lru.set(t.id, t);
    t.used = ++this.tick;
    this.byId.set(t.id, t);
    if (t.json) s.shapes.set(t.leafKey, t);
    else {
      let leaf = s.leaves.get(t.leafKey);
      if (!leaf) {
        leaf = [];
        s.leaves.set(t.leafKey, leaf);
      }
      leaf.push(t);
      this.countFields(s, t, 1);
      if (t.skel !== '' && !s.skels.has(t.skel)) s.skels.set(t.skel, t);
      const h = headOf(t.leafKey);
      if (h !== '') {
        let hl = s.heads.get(h);
        if (!hl) {
          hl = [];
          s.heads.set(h, hl);
        }
        hl.push(t);
        if (hl.length > LEAF_MAX) hl.shift();
      }
    }
  }

  /** Removes a live template; it is reported as evicted, or as merged into template `into` (> 0). */
  retire(s: RefService, victim: RefTemplate, out: CoreOutput | null, into: number): void {
    s.lru.delete(victim.id);
    this.byId.delete(victim.id);
    if (victim.json) s.shapes.delete(victim.leafKey);
    else {
      const leaf = s.leaves.get(victim.leafKey)!;
      leaf.splice(leaf.indexOf(victim), 1);
      if (leaf.length === 0) s.leaves.delete(victim.leafKey);
      this.countFields(s, victim, -1);
      if (victim.skel !== '' && s.skels.get(victim.skel) === victim) s.skels.delete(victim.skel);
      const hl = s.heads.get(headOf(victim.leafKey));
      const k = hl ? hl.indexOf(victim) : -1;
      if (k >= 0) {
        hl!.splice(k, 1);
        if (hl!.length === 0) s.heads.delete(headOf(victim.leafKey));
      }
    }
    this.evictedPending.set(victim.id, victim);
    if (out) {
      out.evictedInto[out.evictedCount] = into;
      out.evicted[out.evictedCount++] = victim.id;
    }
  }

  /** Gives template t other tokens of another length: it moves to that leaf (a full leaf loses its least recently used template). */
  relength(s: RefService, t: RefTemplate, tokens: string[], out: CoreOutput): void {
    const old = s.leaves.get(t.leafKey)!;
    old.splice(old.indexOf(t), 1);
    if (old.length === 0) s.leaves.delete(t.leafKey);
    this.countFields(s, t, -1);
    t.tokens = tokens;
    t.kinds = tokens.map(tokenKind);
    t.values = valuePositions(tokens);
    t.pattern = tokens.join(' ');
    t.leafKey = String(tokens.length) + headOf(t.leafKey);
    this.countFields(s, t, 1);
    let leaf = s.leaves.get(t.leafKey);
    if (!leaf) {
      leaf = [];
      s.leaves.set(t.leafKey, leaf);
    }
    if (leaf.length >= LEAF_MAX && this.mergeBudget > 0) {
      let victim = leaf[0]!;
      for (const c of leaf) if (c.used < victim.used) victim = c;
      this.mergeBudget--;
      this.retire(s, victim, out, 0);
      leaf = s.leaves.get(t.leafKey) ?? [];
      s.leaves.set(t.leafKey, leaf);
    }
    leaf.push(t);
  }
}
