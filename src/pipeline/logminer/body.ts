// What of a log body is the message to mine. OpenTelemetry log bodies are not only one-line text:
// a JSON object with a message field, a logfmt line, a Kubernetes (klog) component line, a
// multi-line stack trace. The event is the message; the rest (other fields, the header, the frames)
// would only split one event into many templates by its variables, so it is kept as parameters
// instead. (The SQL after `statement:` is one value too, but that is the engine's: tokenize.ts.) Shared by both engines (it runs before them), so
// it cannot make them disagree. Plain one-line text, the common case, is returned as it is after a
// few native scans.
import { JSON_MAX_BYTES } from './core.js';

export interface MessageView {
  /** the text to mine */
  text: string;
  /** parameters that are not in the text (other fields, the stack frames), in order */
  extras: string[];
  /** the body was a JSON object */
  json: boolean;
}

/** Fields holding the message of a JSON log record, most specific first (Docker's json-file uses `log`). */
const MESSAGE_KEYS = ['message', 'msg', '@message', 'log', 'event'];
/** Fields kept as parameters of a structured record (the rest of a large record is dropped). */
const MAX_EXTRAS = 16;

/**
 * The message to mine of `body`, or null when the body is mined as it is. Only the first
 * JSON_MAX_BYTES characters are read (the engine looks at fewer), so a 20 MB body costs no more than
 * a 16 KB one; a larger JSON record is mined as text.
 */
export function messageOf(whole: string): MessageView | null {
  const body = whole.length > JSON_MAX_BYTES ? whole.slice(0, JSON_MAX_BYTES) : whole;
  let view: MessageView | null = null;
  const c0 = body.charCodeAt(0);
  if (c0 === 123 || ((c0 === 32 || c0 === 9) && body.trimStart().charCodeAt(0) === 123)) view = body === whole ? fromJson(body) : null;
  else if (firstTokenHasEq(body) || ((c0 === 73 || c0 === 87 || c0 === 69 || c0 === 70) && isDigit(body.charCodeAt(1)) && KLOG.test(body))) {
    view = fromKeyValues(body);
  }
  let text = view ? view.text : body;
  // a record of several lines (a stack trace): its first line is the event
  const nl = text.indexOf('\n');
  if (nl >= 0 && nl < text.length - 1 && text.slice(nl + 1).trim() !== '') {
    view ??= { text, extras: [], json: false };
    const first = firstLine(text);
    view.text = text = first.text;
    view.extras.unshift(first.rest);
  }
  return view;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** Does the first token hold '='? (logfmt starts with a pair; a scan of the whole line costs more) */
function firstTokenHasEq(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 61) return true;
    if (c === 32 || c === 9) return false;
  }
  return false;
}

/** First line of a multi-line record; a Python traceback is named by its last line, the exception. */
function firstLine(text: string): { text: string; rest: string } {
  const lines = text.split(/\r?\n/);
  let i = 0;
  while (i < lines.length - 1 && lines[i]!.trim() === '') i++;
  const first = lines[i]!.trimEnd();
  if (first.startsWith('Traceback (most recent call last)')) {
    let j = lines.length - 1;
    while (j > i && lines[j]!.trim() === '') j--;
    return { text: `${first} ${lines[j]!.trim()}`, rest: lines.slice(i + 1, j).join('\n').trim() };
  }
  return { text: first, rest: lines.slice(i + 1).join('\n').trim() };
}

function valueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
}

function fromJson(body: string): MessageView | null {
  // a line that merely starts with '{' is text: skip the parse (and its exception, ~µs)
  const end = body.trimEnd();
  if (end.charCodeAt(end.length - 1) !== 125) return null;
  let o: unknown;
  try {
    o = JSON.parse(body);
  } catch {
    return null; // not JSON: mined as text
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return null;
  const rec = o as Record<string, unknown>;
  const key = MESSAGE_KEYS.find((k) => typeof rec[k] === 'string' && (rec[k] as string).trim() !== '');
  if (key === undefined) return null; // no message: the engine templates the object on its shape
  const extras: string[] = [];
  for (const k in rec) if (k !== key && extras.length < MAX_EXTRAS) extras.push(`${k}=${valueText(rec[k])}`);
  return { text: rec[key] as string, extras, json: true };
}

/**
 * A Kubernetes component (klog) header: severity and date, time, thread id, source file:line.
 * `I0115 10:00:00.123456       1 controller.go:123] ...`
 */
const KLOG = /^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\s\]]+\] /;
const KEY = /^[A-Za-z_][\w.\-/]*$/;

/**
 * logfmt (`level=info msg="request done" path=/x`) and structured klog (`"Starting" controller="x"`):
 * the msg value, or the leading quoted string, is the message; the other pairs are parameters. A
 * line that is not entirely pairs is text (`user=bob logged in` keeps its words), except that a klog
 * header is always dropped.
 */
function fromKeyValues(body: string): MessageView | null {
  const h = KLOG.exec(body);
  const s = h ? h[0].length : 0;
  const pairs: [string, string][] = [];
  let lead: string | null = null;
  let i = s;
  const n = body.length;
  for (;;) {
    while (i < n && (body.charCodeAt(i) === 32 || body.charCodeAt(i) === 9)) i++;
    if (i >= n) break;
    let key = '';
    if (body.charCodeAt(i) !== 34) {
      const eq = body.indexOf('=', i);
      const sp = nextSpace(body, i);
      if (eq < 0 || eq > sp) return klogText(h, body, s);
      key = body.slice(i, eq);
      if (!KEY.test(key)) return klogText(h, body, s);
      i = eq + 1;
    } else if (pairs.length > 0 || lead !== null) return klogText(h, body, s);
    let v: string;
    if (body.charCodeAt(i) === 34) {
      const q = quoted(body, i);
      if (q === null) return klogText(h, body, s);
      v = q.value;
      i = q.end;
      if (i < n && body.charCodeAt(i) !== 32 && body.charCodeAt(i) !== 9) return klogText(h, body, s);
    } else {
      const e = nextSpace(body, i);
      v = body.slice(i, e);
      i = e;
    }
    if (key === '') lead = v;
    else pairs.push([key, v]);
  }
  const m = lead !== null ? -1 : pairs.findIndex(([k]) => k === 'msg' || k === 'message');
  if (lead === null && (m < 0 || pairs.length < 2)) return klogText(h, body, s);
  const extras = pairs.filter((_, k) => k !== m).slice(0, MAX_EXTRAS).map(([k, v]) => `${k}=${v}`);
  return { text: lead ?? pairs[m]![1], extras, json: false };
}

/** A klog line that is not structured: its text after the header. */
function klogText(h: RegExpExecArray | null, body: string, s: number): MessageView | null {
  return h ? { text: body.slice(s), extras: [], json: false } : null;
}

function nextSpace(s: string, i: number): number {
  while (i < s.length && s.charCodeAt(i) !== 32 && s.charCodeAt(i) !== 9) i++;
  return i;
}

/** The double-quoted string at i with its escapes undone, and the index after it; null when unterminated. */
function quoted(s: string, i: number): { value: string; end: number } | null {
  let out = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === '"') return { value: out, end: j + 1 };
    if (c === '\\' && j + 1 < s.length) {
      const e = s[++j]!;
      out += e === 'n' ? '\n' : e === 't' ? '\t' : e;
    } else out += c;
  }
  return null;
}
