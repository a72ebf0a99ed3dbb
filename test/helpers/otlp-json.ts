// OTLP/JSON request builders: bench/lib/otlp-json.ts (the benchmarks' incident recording uses them too).
export * from '../../bench/lib/otlp-json.js';
