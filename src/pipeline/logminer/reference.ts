// The plain TypeScript reference engine of the log template miner: the readable statement of the
// algorithm, written with strings and Maps for clarity, not speed. assembly/logminer.ts implements the
// same steps over raw memory with hashed tokens; both must produce identical output (ids, flags,
// parameter ranges, numeric values, patterns) for every input, which the conformance test checks.
//
// Text is handled as bytes throughout (a "binary string": one char per UTF-8 byte), so invalid UTF-8,
// binary data and the byte limits behave the same in both engines. The engine mines text; body.ts
// first picks the message out of JSON, logfmt, klog, multi-line and SQL-statement bodies (shared by
// both engines). The steps live in files of one job each:
//  1. Tokenise (tokenize.ts) and mask each token's variables by what they are (mask.ts); a JSON object
//     body without a message is templated on its shape instead (json-shape.ts).
//  2. Route by (token count, first PREFIX_TOKENS tokens): a variable token routes as <*> and a
//     key=value token by its key, so the tree never keys on a variable (tokens.ts leafKeyOf; the
//     leaves and indexes are state.ts).
//  3. In the leaf (Drain, He et al. 2017, with these changes), pick the template with the highest
//     similarity = equal positions / positions that are not already wildcards (Drain counts wildcards
//     in the denominator, so wildcard-heavy lines never matched); a template token that is a partial
//     wildcard such as `rhost=<*>` matches by glob; key=value tokens with the same key, and the values
//     of a run of `key: value` pairs whose key is equal, count as equal (their values are variables).
//     Ties go to the template with more wildcards, then to the older one.
//  4. Accept when similarity ≥ SIM_NUM/SIM_DEN (0.7), or when exactly one position differs and at
//     least two agree (short messages with one variable word), else start a new template. On a match,
//     each differing position is generalised to its common prefix/suffix up to a delimiter plus `<*>`
//     (`user=root` + `user=guest` → `user=<*>`), else `<*>`. A template that generalised absorbs the
//     templates of its leaf with its constants whose variables it now covers (absorb): a merge,
//     reported so the store records it; the generalised template keeps its id.
//     Enum-like words: when one to ENUM_POSITIONS differing positions hold a plain word in both
//     (Started / Stopped; from queued to running / from running to done), they are constants: a
//     template of the leaf with the line's words there that accepts the line takes it (sameWord),
//     else the line starts its own template (reported as split from the match), as long as each of
//     those positions has held fewer than ENUM_MAX distinct words in the templates of the leaf that
//     differ from the match only there (family); a further word makes the positions variables: the
//     match generalises and that family merges into it.
//  5. Variable length: a line no template of its length accepts joins the template with the same
//     skeleton (constants in order, each run of variable tokens one mark: skeletonOf), whatever its
//     length. When a template's skeleton changes as it generalises and a template of another length
//     holds the new one, that one merges into it (reskeleton).
//  6. Still none: a template of another length under the same leading token whose `<*>` runs take
//     the line's tokens, whatever they are (runCovers); else, when ENUM_MAX templates there share
//     the line's leading and trailing tokens and differ from it in a run of plain words, the phrase
//     is a variable: the oldest becomes those tokens around one `<*>` and the others merge (phrase;
//     the merges are merges.ts).
//  7. Parameters: each variable value's byte range, slot and number (params.ts).
//  8. Bounded state: a leaf holds at most LEAF_MAX templates (bounding the comparisons per line) and
//     a service at most maxTemplatesPerService; beyond either, the least recently used template (of
//     the leaf, else of the service) is evicted. Ids come from one counter and are never reused.
import {
  ENUM_MAX, ENUM_POSITIONS, FLAG_CHANGED, FLAG_JSON, FLAG_NEW, FLAG_TRUNCATED, LEAF_MAX, MAX_PARAMS, MAX_TOKENS, SIM_DEN, SIM_NUM,
  type ClassRule, type CoreConfig, type CoreInput, type CoreOutput, type MinerCore,
} from './core.js';
import { WILDCARD, isWs } from './chars.js';
import { jsonShape } from './json-shape.js';
import { absorb, looseMerge, phrase, reskeleton } from './merges.js';
import { parseNumber, runParams, skeletonParams, tokenParam } from './params.js';
import { jsonTemplate, textTemplate, TemplateStore, type RefTemplate } from './state.js';
import { splitPattern, tokenizeLine } from './tokenize.js';
import {
  constantsOf, fieldBefore, generalize, globMatch, headOf, isWord, leafKeyOf, looseCovers, runCovers,
  sameKey, skeletonOf, tokenKind, valuePositions, wordsDiffer,
} from './tokens.js';

function latin1(bytes: Uint8Array, s: number, e: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + s, e - s).toString('latin1');
}

export class ReferenceCore implements MinerCore {
  readonly kind = 'reference' as const;
  private readonly simNum: number;
  private readonly enumMax: number;
  /** the rules left out (CoreConfig.without: measurement only) */
  private readonly off: ReadonlySet<ClassRule>;
  private readonly isWord: (t: string) => boolean;
  private readonly st: TemplateStore;
  /** runCovers' alignment of the current line */
  private readonly at: number[] = [];
  private readonly runEnd: number[] = [];
  private input: CoreInput = { bytes: new Uint8Array(1024), offsets: new Int32Array(65) };
  private out: CoreOutput;

  constructor(config: CoreConfig) {
    this.st = new TemplateStore(Math.max(1, config.maxTemplatesPerService | 0));
    this.simNum = config.similarityTenths ?? SIM_NUM;
    this.enumMax = config.enumMax ?? ENUM_MAX;
    this.off = new Set(config.without ?? []);
    this.isWord = this.off.has('names') ? (t) => isWord(t, false) : isWord;
    this.out = ReferenceCore.alloc(64);
  }

  private static alloc(n: number): CoreOutput {
    return {
      ids: new Float64Array(n),
      flags: new Uint8Array(n),
      paramCount: new Uint8Array(n),
      paramSlot: new Uint16Array(n * MAX_PARAMS),
      paramStart: new Int32Array(n * MAX_PARAMS),
      paramLen: new Int32Array(n * MAX_PARAMS),
      paramNum: new Float64Array(n * MAX_PARAMS),
      splitFrom: new Float64Array(n),
      changed: new Float64Array(n),
      changedCount: 0,
      evicted: new Float64Array(2 * n + LEAF_MAX),
      evictedInto: new Float64Array(2 * n + LEAF_MAX),
      evictedCount: 0,
    };
  }

  prepare(totalBytes: number, n: number): CoreInput {
    if (this.input.bytes.length < totalBytes) this.input.bytes = new Uint8Array(Math.max(totalBytes, this.input.bytes.length * 2));
    if (this.input.offsets.length < n + 1) this.input.offsets = new Int32Array(Math.max(n + 1, this.input.offsets.length * 2));
    if (this.out.ids.length < n) this.out = ReferenceCore.alloc(Math.max(n, this.out.ids.length * 2));
    return this.input;
  }

  nextId(): number {
    return this.st.next;
  }
  setNextId(id: number): void {
    if (id > this.st.next) this.st.next = id;
  }
  liveCount(svc: number): number {
    return this.st.liveCount(svc);
  }

  patternBytes(id: number): Uint8Array | null {
    const t = this.st.byId.get(id) ?? this.st.evictedPending.get(id);
    return t ? Uint8Array.from(Buffer.from(t.pattern, 'latin1')) : null;
  }

  isLive(id: number): boolean {
    return this.st.byId.has(id);
  }

  /**
   * The templates of tpl's leaf that differ from it only by the words at positions ps (tpl included):
   * the values enum-like positions have taken, one template per combination.
   */
  private family(leaf: RefTemplate[], tpl: RefTemplate, ps: number[]): RefTemplate[] {
    const out: RefTemplate[] = [];
    for (const u of leaf) {
      if (!ps.every((p) => this.isWord(u.tokens[p]!))) continue;
      let same = true;
      for (let i = 0; i < tpl.tokens.length && same; i++) if (!ps.includes(i) && u.tokens[i] !== tpl.tokens[i]) same = false;
      if (same) out.push(u);
    }
    return out;
  }

  /** Has every position of ps held fewer than ENUM_MAX distinct words in the family (an enum, still)? */
  private fewWords(fam: RefTemplate[], ps: number[]): boolean {
    for (const p of ps) if (new Set(fam.map((u) => u.tokens[p]!)).size >= this.enumMax) return false;
    return true;
  }

  /** Similarity of template t to line tokens lt as the leaf search computes it: [equal, non-wildcard, wildcards]. */
  private similarity(t: RefTemplate, lt: string[]): [number, number, number] {
    let eq = 0;
    let wild = 0;
    for (let i = 0; i < lt.length; i++) {
      const tt = t.tokens[i]!;
      const kind = t.kinds[i]!;
      if (kind === 1) wild++;
      else if (tt === lt[i] || (kind === 2 && globMatch(tt, lt[i]!)) || sameKey(tt, lt[i]!) || (t.values[i] && t.tokens[i - 1] === lt[i - 1])) eq++;
    }
    const den = lt.length - wild;
    return den === 0 ? [1, 1, wild] : [eq, den, wild];
  }

  private accepts(eq: number, den: number): boolean {
    return eq * SIM_DEN >= this.simNum * den || (den - eq <= 1 && eq >= 2);
  }

  /**
   * The positions template t does not cover yet in line tokens lt: how many, those holding a word in
   * both that differ in more than digits (wordPos), and those where t holds a word whatever the line
   * holds (tplWordPos). A position right after the name of a field the service writes as key=value
   * elsewhere (`for user root` beside `user=root`: fields) holds that field's value, never a constant
   * word: it is not in wordPos, so the templates split off there merge (the family of tplWordPos).
   */
  private diffs(t: RefTemplate, lt: string[], fields: Map<string, number>): { n: number; words: number; wordPos: number[]; tplWordPos: number[] } {
    let n = 0;
    const wordPos: number[] = [];
    const tplWordPos: number[] = [];
    for (let i = 0; i < lt.length; i++) {
      const tt = t.tokens[i]!;
      const kind = t.kinds[i]!;
      if (kind === 1 || tt === lt[i] || (kind === 2 && globMatch(tt, lt[i]!))) continue;
      n++;
      if (this.isWord(tt)) {
        tplWordPos.push(i);
        const field = i > 0 && t.kinds[i - 1] === 0 && fields.has(fieldBefore(t.tokens[i - 1]!)) && !this.off.has('fields');
        if (!field && this.isWord(lt[i]!) && wordsDiffer(tt, lt[i]!)) wordPos.push(i);
      }
    }
    return { n, words: wordPos.length, wordPos, tplWordPos };
  }

  /**
   * The template of the leaf, other than best, that holds the line's words at ps, accepts the line
   * and differs from it in no other word: the event the line's words name. The most similar one
   * (then more wildcards, then the older one), or undefined.
   */
  private sameWord(leaf: RefTemplate[], best: RefTemplate, lt: string[], ps: number[], fields: Map<string, number>): RefTemplate | undefined {
    let alt: RefTemplate | undefined;
    let aEq = 0;
    let aDen = 1;
    let aWild = -1;
    for (const u of leaf) {
      if (u === best || !ps.every((p) => u.tokens[p] === lt[p])) continue;
      const [eq, den, wild] = this.similarity(u, lt);
      if (!this.accepts(eq, den) || this.diffs(u, lt, fields).words > 0) continue;
      const lhs = eq * aDen;
      const rhs = aEq * den;
      if (alt === undefined || lhs > rhs || (lhs === rhs && wild > aWild)) {
        alt = u;
        aEq = eq;
        aDen = den;
        aWild = wild;
      }
    }
    return alt;
  }

  /**
   * The template of head list hl that takes line lt (kinds lk, lineVars variables) with an optional
   * part inside a variable (looseCovers): the most constants matched, then the oldest. this.at holds
   * its slots for the line.
   */
  private looseIn(hl: RefTemplate[] | undefined, lt: string[], lk: number[], lineVars: number): { tpl: RefTemplate; anchors: number } | undefined {
    if (hl === undefined || this.off.has('optional')) return undefined;
    let tpl: RefTemplate | undefined;
    let best = 0;
    for (const u of hl) {
      const a = looseCovers(u.tokens, u.kinds, lt, lk, this.at, lineVars);
      if (a > best || (a === best && a > 0 && u.id < tpl!.id)) {
        tpl = u;
        best = a;
      }
    }
    if (tpl === undefined) return undefined;
    looseCovers(tpl.tokens, tpl.kinds, lt, lk, this.at, lineVars);
    return { tpl, anchors: best };
  }

  restore(svc: number, id: number, pattern: Uint8Array): void {
    const s = this.st.service(svc);
    const text = latin1(pattern, 0, pattern.length);
    if (this.st.byId.has(id)) return;
    let t: RefTemplate;
    const shape = text.length > 0 && text.charCodeAt(0) === 123 ? jsonShape(text) : null;
    if (shape && shape.shape === text) {
      if (s.shapes.has(text)) return;
      t = jsonTemplate(id, svc, text);
    } else t = textTemplate(id, svc, splitPattern(text).slice(0, MAX_TOKENS + 1));
    this.st.add(s, t, null);
    if (id >= this.st.next) this.st.next = id + 1;
  }

  // Long on purpose: the twin of assembly/logminer.ts's mine(), kept line for line so the two can be compared.
  mine(svc: number, n: number): CoreOutput {
    const out = this.out;
    out.changedCount = 0;
    out.evictedCount = 0;
    this.st.startBatch(n);
    const changedSet = new Set<number>();
    const s = this.st.service(svc);
    const { bytes, offsets } = this.input;
    for (let li = 0; li < n; li++) {
      const bs = offsets[li]!;
      const be = offsets[li + 1]!;
      const body = latin1(bytes, bs, be);
      let flags = 0;
      let pc = 0;
      const pbase = li * MAX_PARAMS;
      const addParam = (slot: number, s0: number, e0: number): void => {
        if (pc >= MAX_PARAMS) return;
        out.paramSlot[pbase + pc] = slot;
        out.paramStart[pbase + pc] = bs + s0;
        out.paramLen[pbase + pc] = e0 - s0;
        out.paramNum[pbase + pc] = parseNumber(body, s0, e0);
        pc++;
      };
      let tpl: RefTemplate | undefined;
      let newFrom = 0;
      const shape = this.firstNonWs(body) === 123 ? jsonShape(body) : null;
      if (shape) {
        flags |= FLAG_JSON;
        tpl = s.shapes.get(shape.shape);
        if (!tpl) {
          tpl = jsonTemplate(this.st.next++, svc, shape.shape);
          this.st.add(s, tpl, out);
          flags |= FLAG_NEW;
        } else this.st.touch(s, tpl);
        for (let k = 0; k < shape.starts.length; k++) addParam(k, shape.starts[k]!, shape.ends[k]!);
      } else {
        const line = tokenizeLine(body, !this.off.has('dates'));
        if (line.truncated) flags |= FLAG_TRUNCATED;
        const key = leafKeyOf(line.tokens);
        const leaf = s.leaves.get(key);
        const ntok = line.tokens.length;
        let best: RefTemplate | undefined;
        let bestEq = 0;
        let bestDen = 1;
        let bestWild = -1;
        if (leaf) {
          for (const t of leaf) {
            let eq = 0;
            let wild = 0;
            for (let i = 0; i < ntok; i++) {
              const tt = t.tokens[i]!;
              const kind = t.kinds[i]!;
              if (kind === 1) wild++;
              else if (tt === line.tokens[i] || (kind === 2 && globMatch(tt, line.tokens[i]!)) || sameKey(tt, line.tokens[i]!) || (t.values[i] && t.tokens[i - 1] === line.tokens[i - 1])) eq++;
            }
            const den = ntok - wild;
            const e = den === 0 ? 1 : eq;
            const d = den === 0 ? 1 : den;
            // better when e/d > bestEq/bestDen, or equal with more wildcards
            const lhs = e * bestDen;
            const rhs = bestEq * d;
            if (best === undefined || lhs > rhs || (lhs === rhs && wild > bestWild)) {
              best = t;
              bestEq = e;
              bestDen = d;
              bestWild = wild;
            }
          }
        }
        // accept at simNum/SIM_DEN, or when a single position differs and at least two agree
        let splitFrom = 0;
        let byLoose = false;
        const lk = line.tokens.map(tokenKind);
        let lineVars = 0;
        for (const k of lk) if (k !== 0) lineVars++;
        if (best !== undefined && (bestEq * SIM_DEN >= this.simNum * bestDen || (bestDen - bestEq <= 1 && bestEq >= 2))) {
          // one position holds a different word in both (among any other differences): a constant
          // of an enum-like position (its own template) until the position has held more than
          // ENUM_MAX words, then a variable that merges them all. A template of the leaf that holds
          // the line's word there and accepts the line takes it instead (the same event).
          let d = this.diffs(best, line.tokens, s.fields);
          let family: RefTemplate[] | null = null;
          if (d.words >= 1 && d.words <= ENUM_POSITIONS) {
            family = this.family(leaf!, best, d.wordPos);
            if (this.fewWords(family, d.wordPos)) {
              const alt = this.sameWord(leaf!, best, line.tokens, d.wordPos, s.fields);
              if (alt !== undefined) {
                best = alt;
                d = this.diffs(alt, line.tokens, s.fields);
                family = null;
              } else splitFrom = best.id;
            }
          }
          const nd = d.n;
          if (splitFrom !== 0 || nd > 0) {
            // a line that would split off or change its template, that a template of its leading
            // token takes as it is with more of its constants in place (an optional part shifted its
            // tokens: looseCovers), is that template's event
            const lo = this.looseIn(s.heads.get(headOf(key)), line.tokens, lk, lineVars);
            if (lo !== undefined && lo.anchors > this.similarity(best, line.tokens)[0]) {
              tpl = lo.tpl;
              splitFrom = 0;
              byLoose = true;
            }
          }
          if (splitFrom === 0 && !byLoose) {
            tpl = best;
            if (nd > 0) {
              // a value that is no word where the template holds one (`notes.txt` after `alpha`,
              // `gamma`): the position is a variable, so the templates split off there by their
              // words (the family) merge into this one as it generalises
              if (family === null && d.tplWordPos.length >= 1 && d.tplWordPos.length <= ENUM_POSITIONS) family = this.family(leaf!, tpl, d.tplWordPos);
              this.st.countFields(s, tpl, -1);
              for (let i = 0; i < ntok; i++) {
                const tt = tpl.tokens[i]!;
                const kind = tpl.kinds[i]!;
                if (kind === 1 || tt === line.tokens[i]) continue;
                if (kind === 2 && globMatch(tt, line.tokens[i]!)) continue;
                const g = generalize(tt, line.tokens[i]!);
                tpl.tokens[i] = g;
                tpl.kinds[i] = tokenKind(g);
              }
              tpl.pattern = tpl.tokens.join(' ');
              tpl.values = valuePositions(tpl.tokens);
              this.st.countFields(s, tpl, 1);
              flags |= FLAG_CHANGED;
              if (family) {
                for (let k = family.length - 1; k >= 0 && this.st.mergeBudget > 0; k--) {
                  if (family[k] === tpl) continue;
                  this.st.mergeBudget--;
                  this.st.retire(s, family[k]!, out, tpl.id);
                }
              }
              absorb(this.st, s, tpl, out);
              reskeleton(this.st, s, tpl, out);
              if (!this.off.has('optional')) looseMerge(this.st, s, tpl, out, this.at);
            }
            this.st.touch(s, tpl);
          }
        }
        let byLength = false;
        if (tpl === undefined) {
          // no template of this length fits: one of another length with the same skeleton is the same event
          const sk = skeletonOf(line.tokens, line.tokens.map(tokenKind));
          const u = sk === '' ? undefined : s.skels.get(sk);
          if (u !== undefined && u.tokens.length !== ntok) {
            tpl = u;
            byLength = true;
            this.st.touch(s, tpl);
            skeletonParams(tpl.tokens, tpl.kinds, line, addParam);
          }
        }
        let byRun = false;
        if (tpl === undefined && splitFrom === 0) {
          // a template of another length whose `<*>` runs take the line's tokens (the most specific
          // one, then the oldest), else a phrase of plain words many templates differ in
          const hl = s.heads.get(headOf(key));
          if (hl !== undefined) {
            let bestC = -1;
            for (const u of hl) {
              if (u.tokens.length === ntok || !runCovers(u.tokens, u.kinds, line.tokens, this.at, this.runEnd)) continue;
              const c = constantsOf(u.kinds);
              if (c > bestC || (c === bestC && u.id < tpl!.id)) {
                tpl = u;
                bestC = c;
              }
            }
            if (tpl === undefined) {
              // a template, of any length, that differs from the line by an optional part inside a
              // variable (the most constants matched, then the oldest)
              const lo = this.looseIn(hl, line.tokens, lk, lineVars);
              if (lo !== undefined) {
                tpl = lo.tpl;
                byLoose = true;
              }
            } else {
              byRun = true;
              this.st.touch(s, tpl);
              runCovers(tpl.tokens, tpl.kinds, line.tokens, this.at, this.runEnd);
              runParams(tpl.tokens, tpl.kinds, line, this.at, this.runEnd, addParam);
            }
            if (tpl === undefined) {
              tpl = phrase(this.st, s, hl, line.tokens, out, this.enumMax, this.at, this.runEnd);
              if (tpl !== undefined) {
                flags |= FLAG_CHANGED;
                byRun = true;
                this.st.touch(s, tpl);
                runCovers(tpl.tokens, tpl.kinds, line.tokens, this.at, this.runEnd);
                runParams(tpl.tokens, tpl.kinds, line, this.at, this.runEnd, addParam);
              }
            }
          }
        }
        if (tpl === undefined) {
          tpl = textTemplate(this.st.next++, svc, line.tokens.slice(), key);
          this.st.add(s, tpl, out);
          flags |= FLAG_NEW;
          newFrom = splitFrom;
        }
        if (byLoose) {
          byRun = true;
          this.st.touch(s, tpl);
          const last = line.truncated ? ntok - 1 : ntok;
          for (let j = 0; j < last; j++) if (this.at[j]! >= 0) tokenParam(WILDCARD, 1, line, j, this.at[j]!, addParam);
        }
        if (!byLength && !byRun) {
          const last = line.truncated ? ntok - 1 : ntok;
          for (let i = 0; i < last && pc < MAX_PARAMS; i++) tokenParam(tpl.tokens[i]!, tpl.kinds[i]!, line, i, i, addParam);
        }
      }
      out.ids[li] = tpl.id;
      out.flags[li] = flags;
      out.splitFrom[li] = newFrom;
      out.paramCount[li] = pc;
      if ((flags & (FLAG_NEW | FLAG_CHANGED)) !== 0 && !changedSet.has(tpl.id)) {
        changedSet.add(tpl.id);
        out.changed[out.changedCount++] = tpl.id;
      }
    }
    return out;
  }

  private firstNonWs(body: string): number {
    for (let i = 0; i < body.length; i++) {
      const c = body.charCodeAt(i);
      if (!isWs(c)) return c;
    }
    return -1;
  }
}
