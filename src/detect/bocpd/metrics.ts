// Change point scores exactly as TCPDBench computes them (van den Burg & Williams 2020,
// alan-turing-institute/TCPDBench analysis/scripts/metrics.py): F1 with a margin, precision
// pooled over annotators, recall averaged over them, index 0 a change point on both sides; and
// segmentation covering averaged over annotators. Locations are 0-based indices.
//
// metrics.py iterates Python sets, and its greedy matching visits the true change points in set
// iteration order, which decides ties between annotators' points competing for one prediction. To
// score exactly as it does, PySet below reproduces CPython's set table (open addressing over
// hash(i) == i, 9 linear probes then perturbed probing, resize to 4x used when 3/5 full) and
// iterates in table order; test/detect/metrics.test.ts checks it against metrics.py's doctests.

/** Insertion-ordered model of a CPython set of small non-negative ints, iterated in table order. */
export class PySet {
  private table: Array<number | undefined> = new Array(8).fill(undefined);
  private used = 0;
  constructor(items: Iterable<number> = []) {
    for (const v of items) this.add(v);
  }
  get size(): number {
    return this.used;
  }
  has(v: number): boolean {
    return this.table.includes(v);
  }
  add(v: number): void {
    if (!Number.isInteger(v) || v < 0) throw new RangeError('PySet holds non-negative integers');
    if (this.has(v)) return;
    PySet.insert(this.table, v);
    this.used++;
    const mask = this.table.length - 1;
    if (this.used * 5 >= mask * 3) this.resize(this.used > 50000 ? this.used * 2 : this.used * 4);
  }
  private resize(minUsed: number): void {
    let size = 8;
    while (size <= minUsed) size <<= 1;
    const old = this.table;
    this.table = new Array(size).fill(undefined);
    for (const v of old) if (v !== undefined && v >= 0) PySet.insert(this.table, v);
  }
  private static insert(table: Array<number | undefined>, v: number): void {
    const mask = table.length - 1;
    let perturb = v;
    let i = v & mask;
    for (;;) {
      const probes = i + 9 <= mask ? 9 : 0;
      for (let j = 0; j <= probes; j++) {
        if (table[i + j] === undefined) {
          table[i + j] = v;
          return;
        }
      }
      perturb = Math.floor(perturb / 32);
      i = (i * 5 + 1 + perturb) & mask;
    }
  }
  *[Symbol.iterator](): IterableIterator<number> {
    for (const v of this.table) if (v !== undefined && v >= 0) yield v;
  }
}

/** True positives without double counting: each prediction matches at most one true point. */
export function truePositives(truth: Iterable<number>, predicted: Iterable<number>, margin = 5): Set<number> {
  const X = new Set(predicted);
  const tp = new Set<number>();
  for (const tau of truth) {
    let best = -1;
    let bestDist = Infinity;
    for (const x of X) {
      const d = Math.abs(tau - x);
      if (d <= margin && (d < bestDist || (d === bestDist && x < best))) {
        bestDist = d;
        best = x;
      }
    }
    if (bestDist === Infinity) continue;
    tp.add(tau);
    X.delete(best);
  }
  return tp;
}

/** F1 (alpha 0.5): precision pooled over annotators, recall averaged; 0 added to every set. */
export function fMeasure(annotations: Record<string, number[]>, predictions: number[], margin = 5): { f1: number; precision: number; recall: number } {
  const Tks = Object.values(annotations).map((a) => {
    const s = new PySet(a);
    s.add(0);
    return s;
  });
  const X = new Set([...predictions, 0]);
  const Tstar = new PySet();
  for (const Tk of Tks) for (const tau of Tk) Tstar.add(tau);
  const K = Tks.length;
  const precision = truePositives(Tstar, X, margin).size / X.size;
  let recall = 0;
  for (const Tk of Tks) recall += truePositives(Tk, X, margin).size / Tk.size;
  recall /= K;
  const f1 = (precision * recall) / (0.5 * recall + 0.5 * precision);
  return { f1: Number.isFinite(f1) ? f1 : 0, precision, recall };
}

/** The partition of [0, n) given by change point locations (a location starts a segment). */
export function partitionFromCps(locations: number[], n: number): Array<[number, number]> {
  const cps = [...new Set(locations)].filter((c) => c > 0 && c < n).sort((a, b) => a - b);
  const out: Array<[number, number]> = [];
  let start = 0;
  for (const c of cps) {
    out.push([start, c]);
    start = c;
  }
  out.push([start, n]);
  return out;
}

function jaccard(a: [number, number], b: [number, number]): number {
  const inter = Math.max(0, Math.min(a[1], b[1]) - Math.max(a[0], b[0]));
  const union = a[1] - a[0] + (b[1] - b[0]) - inter;
  return inter / union;
}

/** Covering of segmentation S by S' (Arbelaez et al. 2010, eq. 8). */
export function coverSingle(Sprime: Array<[number, number]>, Sx: Array<[number, number]>, n: number): number {
  let c = 0;
  for (const r of Sx) {
    let best = 0;
    for (const rp of Sprime) best = Math.max(best, jaccard(r, rp));
    c += (r[1] - r[0]) * best;
  }
  return c / n;
}

/** Segmentation covering averaged over annotators. */
export function covering(annotations: Record<string, number[]>, predictions: number[], n: number): number {
  const px = partitionFromCps(predictions, n);
  const parts = Object.values(annotations).map((a) => partitionFromCps(a, n));
  let s = 0;
  for (const a of parts) s += coverSingle(px, a, n);
  return s / parts.length;
}
