// The reads of one diagnosis: rows.ts (what each statement returns), sampling.ts (where and how much
// is read), statements.ts (the SQL), runner.ts (running them under the call's deadline).
export * from './rows.js';
export * from './sampling.js';
export * from './statements.js';
export * from './runner.js';
