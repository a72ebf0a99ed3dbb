import { describe, expect, it } from 'vitest';
import { COMMANDS, UsageError, helpFor, optFlag, optValue, optValues, parseArgs, parseTimestampUs } from '../../src/cli/args.js';

describe('parseArgs', () => {
  it('global options before or after the command, --opt=value and --opt value', () => {
    const p = parseArgs(['--url', 'http://h:1', 'diagnose', '--service=a', '--service', 'b', 'c', '--api-key=k']);
    expect(p.command?.name).toBe('diagnose');
    expect(optValue(p, 'url')).toBe('http://h:1');
    expect(optValue(p, 'api-key')).toBe('k');
    expect(optValues(p, 'service')).toEqual(['a', 'b']);
    expect(p.positional).toEqual(['c']);
    expect(p.help).toBe(false);
  });

  it('flags, -- and help', () => {
    const p = parseArgs(['query', '--full-scan', '--', '--not-an-option']);
    expect(optFlag(p, 'full-scan')).toBe(true);
    expect(p.positional).toEqual(['--not-an-option']);
    expect(parseArgs(['query', '-h']).help).toBe(true);
    expect(parseArgs(['--help']).command).toBeNull();
  });

  it('a SQL argument that starts with a minus sign number is positional', () => {
    expect(parseArgs(['query', '-1']).positional).toEqual(['-1']);
  });

  it.each([
    [['nope']],
    [['query', '--file']],
    [['anomalies', '--service', 'a', '--service', 'b']], // not repeatable
    [['status', '--full-scan']], // option of another command
    [['status', '-x']],
    [['query', '--full-scan=1']],
    [['--service', 'a', 'diagnose']], // command options go after the command
  ])('usage error: %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
  });
});

describe('parseTimestampUs', () => {
  it('16-digit microseconds pass through', () => {
    expect(parseTimestampUs('from-ts', '1735689600000000')).toBe(1735689600000000);
  });
  it('ISO strings become microseconds', () => {
    expect(parseTimestampUs('from-ts', '2025-01-01T00:00:00Z')).toBe(1735689600000000);
    expect(parseTimestampUs('from-ts', '2025-01-01T00:00:00.123Z')).toBe(1735689600123000);
  });
  it.each([
    ['1735689600', /seconds/],
    ['1735689600000', /milliseconds/],
    ['1735689600000000000', /nanoseconds/],
    ['soon', /not a timestamp/],
  ])('%s is refused', (raw, msg) => {
    expect(() => parseTimestampUs('from-ts', raw)).toThrow(msg);
  });
});

describe('helpFor', () => {
  it('every command has a usage line starting with its name and documents its options', () => {
    for (const c of COMMANDS) {
      const h = helpFor(c) as { usage: string; options: Array<{ option: string }> };
      expect(h.usage.startsWith(`tds ${c.name}`)).toBe(true);
      expect(h.options.length).toBe(c.options.length);
    }
    const q = helpFor(COMMANDS.find((c) => c.name === 'query')!) as { options: Array<{ option: string }>; details: string[] };
    expect(q.options.map((o) => o.option)).toEqual(['--file FILE', '--full-scan']);
    expect(q.details.join(' ')).toMatch(/now\(\)/);
  });
});
