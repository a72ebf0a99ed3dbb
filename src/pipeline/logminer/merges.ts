// The merges of the reference engine (assembly/logminer.ts has a twin of each): a template that
// generalised takes over the templates it now covers, which are the same event split in two by the
// order lines came in; each merged template is retired with `merged_into` set to the survivor, which
// keeps its id. absorb: templates of its leaf whose variables it covers; reskeleton: a template of
// another length that holds its new skeleton; looseMerge: one of its leading token it takes with an
// optional part inside a variable; phrase: templates that differ in a phrase of plain words.
import { WILDCARD } from './chars.js';
import type { CoreOutput } from './core.js';
import type { RefService, RefTemplate, TemplateStore } from './state.js';
import { coversToken, globMatch, headOf, looseCovers, phraseContext, phraseRun, runCovers, skeletonOf } from './tokens.js';

/**
 * After tpl generalised: another template of its leaf with the same constant tokens, whose
 * variables tpl's now cover (`"curl/<*>"` under `"<*>"`), is the same event split in two by the
 * order lines came in, so it merges into tpl: tpl keeps its id and the other is retired, reported
 * with `into`. A template that differs in a constant word stays (Transitioned from NEW to
 * UNASSIGNED is not Transitioned from <*> to <*>: merging those cost Hadoop 0.01 GA). At most
 * n + LEAF_MAX merges per batch (the size of the output arrays).
 */
export function absorb(st: TemplateStore, s: RefService, tpl: RefTemplate, out: CoreOutput): void {
  const leaf = s.leaves.get(tpl.leafKey)!;
  for (let k = leaf.length - 1; k >= 0 && st.mergeBudget > 0; k--) {
    const u = leaf[k]!;
    if (u === tpl) continue;
    let covered = true;
    for (let i = 0; i < tpl.tokens.length && covered; i++) {
      const kind = tpl.kinds[i]!;
      covered = tpl.tokens[i] === u.tokens[i] || (u.kinds[i] !== 0 && (kind === 1 || (kind === 2 && globMatch(tpl.tokens[i]!, u.tokens[i]!))));
    }
    if (!covered) continue;
    st.mergeBudget--;
    st.retire(s, u, out, tpl.id);
  }
}

/**
 * A line no template takes, that shares its leading and trailing tokens with templates of its head
 * and differs from each in a run of plain words (`connect failed: connection reset by peer`, `...
 * no route to host`): those phrases are values of one variable once ENUM_MAX templates hold one
 * each (a few stay constants, as enum-like words do). Then the oldest of them becomes the shared
 * tokens around one `<*>` (keeping its id; it moves to the leaf of its new length), the others
 * merge into it, and it is returned; else undefined.
 */
export function phrase(st: TemplateStore, s: RefService, hl: RefTemplate[], lt: string[], out: CoreOutput, enumMax: number, at: number[], runEnd: number[]): RefTemplate | undefined {
  const n = lt.length;
  const sib: { u: RefTemplate; p: number; q: number }[] = [];
  for (const u of hl) {
    const m = u.tokens.length;
    const lim = (m < n ? m : n) - 1;
    let p = 0;
    while (p < lim && coversToken(u.tokens[p]!, u.kinds[p]!, lt[p]!)) p++;
    let q = 0;
    while (p + q < lim && coversToken(u.tokens[m - 1 - q]!, u.kinds[m - 1 - q]!, lt[n - 1 - q]!)) q++;
    if (p < 1 || !phraseContext(u.kinds, p, q) || !phraseRun(u.tokens, p, m - q) || !phraseRun(lt, p, n - q)) continue;
    sib.push({ u, p, q });
  }
  if (sib.length < enumMax) return undefined;
  let p = n;
  let q = n;
  for (const x of sib) {
    if (x.p < p) p = x.p;
    if (x.q < q) q = x.q;
  }
  if (!phraseRun(lt, p, n - q)) return undefined;
  let sv: RefTemplate | undefined;
  let members = 0;
  for (const { u } of sib) {
    if (!phraseRun(u.tokens, p, u.tokens.length - q)) continue;
    members++;
    if (sv === undefined || u.id < sv.id) sv = u;
  }
  if (sv === undefined || members < enumMax || st.mergeBudget < members) return undefined;
  for (const { u } of sib) {
    if (u === sv || !phraseRun(u.tokens, p, u.tokens.length - q)) continue;
    st.mergeBudget--;
    st.retire(s, u, out, sv.id);
  }
  const m = sv.tokens.length;
  st.relength(s, sv, [...sv.tokens.slice(0, p), WILDCARD, ...sv.tokens.slice(m - q)], out);
  absorb(st, s, sv, out);
  // templates of other lengths under the head that its run now covers (`failed: <*> is <*>`, two
  // phrases Drain joined before) are the same event. Only here: doing so whenever a template
  // generalises merged OpenSSH's `for invalid user <*>` into `for <*>` (GA 0.99 → 0.74).
  for (let k = hl.length - 1; k >= 0 && st.mergeBudget > 0; k--) {
    const u = hl[k]!;
    if (u === sv || u.tokens.length === sv.tokens.length || !runCovers(sv.tokens, sv.kinds, u.tokens, at, runEnd)) continue;
    st.mergeBudget--;
    st.retire(s, u, out, sv.id);
  }
  reskeleton(st, s, sv, out);
  return sv;
}

/**
 * After tpl generalised, its skeleton may have changed: when a template of another length already
 * holds the new one, they are one event, so that one merges into tpl (tpl keeps its id, as in
 * absorb). Templates of one length are absorb's to merge: they are compared token by token.
 */
export function reskeleton(st: TemplateStore, s: RefService, tpl: RefTemplate, out: CoreOutput): void {
  const sk = skeletonOf(tpl.tokens, tpl.kinds);
  if (sk === tpl.skel) return;
  if (tpl.skel !== '' && s.skels.get(tpl.skel) === tpl) s.skels.delete(tpl.skel);
  tpl.skel = sk;
  if (sk === '') return;
  const u = s.skels.get(sk);
  if (u !== undefined && u.tokens.length !== tpl.tokens.length && st.mergeBudget > 0) {
    st.mergeBudget--;
    st.retire(s, u, out, tpl.id);
  }
  if (!s.skels.has(sk)) s.skels.set(sk, tpl);
}

/**
 * After tpl generalised: a template of another length under its leading token that tpl now takes
 * with an optional part inside a variable (looseCovers) is the same event, kept apart only because
 * its line came before tpl's variable was one (`lifetime -` before `lifetime <*>`): it merges into
 * tpl, which keeps its id.
 */
export function looseMerge(st: TemplateStore, s: RefService, tpl: RefTemplate, out: CoreOutput, at: number[]): void {
  const hl = s.heads.get(headOf(tpl.leafKey));
  if (hl === undefined) return;
  for (let k = hl.length - 1; k >= 0 && st.mergeBudget > 0; k--) {
    const u = hl[k]!;
    if (u === tpl || u.tokens.length === tpl.tokens.length) continue;
    if (looseCovers(tpl.tokens, tpl.kinds, u.tokens, u.kinds, at, u.kinds.filter((k) => k !== 0).length) === 0) continue;
    st.mergeBudget--;
    st.retire(s, u, out, tpl.id);
  }
}
