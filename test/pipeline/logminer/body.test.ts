// body.ts on its own: which part of a body is the message, and what becomes parameters.
import { describe, expect, it } from 'vitest';
import { messageOf } from '../../../src/pipeline/logminer/body.js';

describe('messageOf', () => {
  it('leaves plain one-line text alone', () => {
    for (const b of ['user 7 logged in', 'a=b c', 'x', '', '   ', 'ends with a newline\n', 'crlf\r\n', '{not json}', 'I0305 not klog']) {
      expect(messageOf(b), JSON.stringify(b)).toBeNull();
    }
  });

  it('JSON: the first message field that is a non-empty string, other fields in order', () => {
    expect(messageOf('{"level":"info","msg":"hi there","n":3,"o":{"a":[1]}}')).toEqual({ text: 'hi there', extras: ['level=info', 'n=3', 'o={"a":[1]}'], json: true });
    expect(messageOf('{"message":"","msg":"second"}')!.text).toBe('second');
    expect(messageOf('{"message":"m","msg":"not this one"}')).toEqual({ text: 'm', extras: ['msg=not this one'], json: true });
    expect(messageOf('\t{"log":"from docker\\n","stream":"stdout"}\n')).toEqual({ text: 'from docker\n', extras: ['stream=stdout'], json: true });
    // no message field, a non-string one, an array, invalid or truncated JSON: the body as it is
    for (const b of ['{"a":1}', '{"msg":1}', '{"msg":null}', '[{"msg":"x"}]', '{"msg":"x"', '{"msg":"x"} tail', '{"msg":"x",}']) {
      expect(messageOf(b), b).toBeNull();
    }
  });

  it('JSON: at most 16 extras; a record over 16 KiB is text', () => {
    const big: Record<string, string> = { msg: 'm' };
    for (let i = 0; i < 40; i++) big[`k${i}`] = 'v';
    expect(messageOf(JSON.stringify(big))!.extras).toHaveLength(16);
    expect(messageOf(JSON.stringify({ msg: 'x'.repeat(20000) }))).toBeNull();
  });

  it('logfmt: every token a pair and one of them msg or message', () => {
    expect(messageOf('level=info msg="a \\"b\\" c" d=1')).toEqual({ text: 'a "b" c', extras: ['level=info', 'd=1'], json: false });
    expect(messageOf('message=plain k="v w"')).toEqual({ text: 'plain', extras: ['k=v w'], json: false });
    for (const b of ['msg=alone', 'level=info msg="unterminated', 'level=info msg=x and words', 'level=info other=x', 'k="v"x msg=y', '=v msg=x', '9k=v msg=x']) {
      expect(messageOf(b), b).toBeNull();
    }
  });

  it('klog: the header is dropped; a structured line gives its quoted message and pairs', () => {
    const h = 'E0305 10:00:00.123456    4711 reflector.go:138] ';
    expect(messageOf(h + 'failed to list pods')).toEqual({ text: 'failed to list pods', extras: [], json: false });
    expect(messageOf(h + '"Starting" controller="job" workers=2')).toEqual({ text: 'Starting', extras: ['controller=job', 'workers=2'], json: false });
    expect(messageOf(h + '"unterminated quote')).toEqual({ text: '"unterminated quote', extras: [], json: false });
    expect(messageOf(h)).toEqual({ text: '', extras: [], json: false });
    expect(messageOf('X0305 10:00:00.123456 1 a.go:1] msg')).toBeNull();
  });

  it('multi-line: the first non-empty line; a Python traceback by its exception; the rest is one parameter', () => {
    expect(messageOf('\r\n\r\nboom\r\n\tat a\r\n\tat b\r\n')).toEqual({ text: 'boom', extras: ['at a\n\tat b'], json: false });
    expect(messageOf('Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1\n\n')).toEqual({
      text: 'Traceback (most recent call last): KeyError: 1', extras: ['File "x.py", line 1'], json: false,
    });
    expect(messageOf('Traceback (most recent call last):\n\n')).toBeNull();
    // a JSON message with a stack in it: both rules apply, the frames go first
    expect(messageOf('{"msg":"failed\\n\\tat x.Y(Y.java:1)","level":"error"}')).toEqual({ text: 'failed', extras: ['at x.Y(Y.java:1)', 'level=error'], json: true });
  });

  it('reads at most 16 KiB of a body, however large', () => {
    expect(messageOf('x\n'.repeat(5_000_000))!.text).toBe('x');
    expect(messageOf('a=1 '.repeat(5_000_000))).toBeNull();
    // A message key past the first 16 KiB is never seen: the record is mined as text.
    expect(messageOf('a=1 '.repeat(4096) + 'msg=late')).toBeNull();
    expect(messageOf('a=1 '.repeat(4000) + 'msg=early')!.text).toBe('early');
  });
});
