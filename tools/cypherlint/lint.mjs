#!/usr/bin/env node
// Lint the project's .cypher files with Neo4j's own Cypher linter
// (@neo4j-cypher/language-support, lintCypherQuery).
//
// Usage: node tools/cypherlint/lint.mjs [--vocab VOCAB.json] [--no-catalog] DIR_OR_FILE...
//
// Prints `path:line:col: severity: message` per problem (1-based line and
// column), then `cypher lint: N files, E errors, W warnings`. Exits 1 when any
// error or warning was reported, or when no .cypher file was found; exits 2
// on a usage problem (bad flag, unreadable vocab, missing path).
// See README.md for the severity policy.

import fs from 'node:fs';
import path from 'node:path';
import {
  highlightSyntax,
  lintCypherQuery,
  parseParameters,
  testData,
} from '@neo4j-cypher/language-support';

const USAGE =
  'usage: node tools/cypherlint/lint.mjs [--vocab VOCAB.json] [--no-catalog] DIR_OR_FILE...';

// Paths containing this are FalkorDB-only DDL, not Neo4j Cypher.
const EXCLUDED_PATH_PART = '/schema/falkordb/';
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.venv']);
const VOCAB_KEYS = ['labels', 'relationshipTypes', 'propertyKeys'];
const SEVERITY_NAMES = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

function usageError(message) {
  process.stderr.write(`cypherlint: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { vocab: null, catalog: true, paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (arg === '--vocab') {
      if (i + 1 >= argv.length) usageError('--vocab needs a file argument');
      opts.vocab = argv[++i];
    } else if (arg.startsWith('--vocab=')) {
      opts.vocab = arg.slice('--vocab='.length);
    } else if (arg === '--no-catalog') {
      opts.catalog = false;
    } else if (arg === '--') {
      opts.paths.push(...argv.slice(i + 1));
      break;
    } else if (arg.startsWith('-')) {
      usageError(`unknown option ${arg}`);
    } else {
      opts.paths.push(arg);
    }
  }
  if (opts.paths.length === 0) usageError('no DIR_OR_FILE given');
  return opts;
}

function loadVocab(file) {
  let data;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    usageError(`cannot read vocab ${file}: ${e.message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    usageError(`vocab ${file} must be a JSON object`);
  }
  for (const key of Object.keys(data)) {
    // Keys starting with $ or _ are free for comments; anything else unknown
    // is most likely a misspelt key that would silently disable a check.
    if (!VOCAB_KEYS.includes(key) && !/^[$_]/.test(key)) {
      usageError(`vocab ${file}: unknown key "${key}" (expected ${VOCAB_KEYS.join(', ')})`);
    }
  }
  const vocab = {};
  for (const key of VOCAB_KEYS) {
    const value = data[key];
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      usageError(`vocab ${file}: "${key}" must be an array of strings`);
    }
    vocab[key] = [...new Set(value)];
  }
  return vocab;
}

function isExcluded(p) {
  const abs = path.resolve(p).split(path.sep).join('/');
  return abs.includes(EXCLUDED_PATH_PART);
}

function collectFiles(paths) {
  const files = [];
  const walk = (dir) => {
    const entries = fs.readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        try {
          const st = fs.statSync(full);
          isDir = false; // do not follow directory symlinks (no loops)
          isFile = st.isFile();
        } catch {
          continue; // dangling link
        }
      }
      if (isDir) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(full);
      } else if (isFile && entry.name.endsWith('.cypher') && !isExcluded(full)) {
        files.push(full);
      }
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      usageError(`no such file or directory: ${p}`);
    }
    if (st.isDirectory()) {
      walk(p);
    } else if (!isExcluded(p)) {
      files.push(p); // an explicitly named file is linted whatever its extension
    }
  }
  return [...new Set(files)];
}

// Blank out comments (same length, newlines kept) so offsets still match the
// file; string literals and backticked names are left alone. Also returns the
// offsets of top-level `;` (statement separators).
function maskComments(text) {
  let out = '';
  const semicolons = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      let j = text.indexOf('\n', i);
      if (j < 0) j = text.length;
      out += ' '.repeat(j - i);
      i = j;
    } else if (c === '/' && text[i + 1] === '*') {
      let j = text.indexOf('*/', i + 2);
      j = j < 0 ? text.length : j + 2;
      out += text.slice(i, j).replace(/[^\n]/g, ' ');
      i = j;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' && c !== '`' ? 2 : 1;
      j = Math.min(j + 1, text.length);
      out += text.slice(i, j);
      i = j;
    } else {
      if (c === ';') semicolons.push(i);
      out += c;
      i++;
    }
  }
  return { masked: out, semicolons };
}

// The upstream linter does not check label, relationship type and property
// names inside CREATE INDEX / CREATE CONSTRAINT, so an index on `:Stpe` would
// pass. With a vocab, check those names here.
const NAME = '(?:`(?:[^`]|``)*`|[\\p{L}_][\\p{L}\\p{N}_]*)';
const NAMES = `${NAME}(?:\\s*\\|\\s*${NAME})*`;
const DDL_HEAD = /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:[A-Z]+\s+)?(?:INDEX|CONSTRAINT)\b/iu;
const DDL_NODE = new RegExp(`\\bFOR\\s*\\(\\s*(${NAME})?\\s*:\\s*(${NAMES})\\s*\\)`, 'iud');
const DDL_REL = new RegExp(
  `\\bFOR\\s*\\(\\s*\\)\\s*<?-\\s*\\[\\s*(${NAME})?\\s*:\\s*(${NAMES})\\s*\\]\\s*->?\\s*\\(\\s*\\)`,
  'iud',
);
const unquote = (name) => (name.startsWith('`') ? name.slice(1, -1).replace(/``/g, '`') : name);

function ddlVocabProblems(masked, semicolons, vocab) {
  const problems = [];
  const bounds = [-1, ...semicolons, masked.length];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const start = bounds[k] + 1;
    const stmt = masked.slice(start, bounds[k + 1]);
    if (!DDL_HEAD.test(stmt)) continue;
    const node = DDL_NODE.exec(stmt);
    const rel = node ? null : DDL_REL.exec(stmt);
    const m = node ?? rel;
    if (!m) continue;
    const [kind, known] = node ? ['Label', vocab.labels] : ['Relationship type', vocab.relationshipTypes];
    const namesAt = m.indices[2][0];
    for (const n of m[2].matchAll(new RegExp(NAME, 'gu'))) {
      if (!known.includes(unquote(n[0]))) {
        problems.push({
          offset: start + namesAt + n.index,
          message: `${kind} ${n[0]} is not in the vocab (index/constraint definition)`,
        });
      }
    }
    if (!m[1]) continue;
    const variable = unquote(m[1]);
    const restAt = m.indices[0][1];
    let rest = stmt.slice(restAt);
    const options = /\bOPTIONS\b/i.exec(rest);
    if (options) rest = rest.slice(0, options.index);
    const access = new RegExp(`(${NAME})\\s*\\.\\s*(${NAME})`, 'gud');
    for (const a of rest.matchAll(access)) {
      if (unquote(a[1]) !== variable) continue;
      if (!vocab.propertyKeys.includes(unquote(a[2]))) {
        problems.push({
          offset: start + restAt + a.indices[2][0],
          message: `Property key ${a[2]} is not in the vocab (index/constraint definition)`,
        });
      }
    }
  }
  return problems;
}

// The upstream linter checks names against the schema only in reading
// clauses (MATCH, WITH, RETURN): labels, types and keys in CREATE, MERGE,
// SET, REMOVE and FOREACH are taken as "may create a new name". Our vocab is
// closed, so check every name here too, from the package's own tokenizer
// (highlightSyntax: each token with its type and position).
const LABEL_EXPR_OPS = new Set([':', '|', '&', '!', '%']);
const RANGE_OPS = new Set(['*', '..']);
const isTok = (t, type, text) => t && t.tokenType === type && (text === undefined || t.token === text);

function symbolTypeAt(symbols, offset) {
  const symbol = symbols.find((s) => s.references.includes(offset) || s.definitionPosition === offset);
  if (!symbol || symbol.types.length === 0) return null;
  if (symbol.types.every((t) => t === 'Node')) return 'node';
  if (symbol.types.every((t) => t === 'Relationship')) return 'rel';
  if (symbol.types.every((t) => t === 'Node' || t === 'Relationship')) return 'either';
  return null;
}

// Walk back from tokens[i] over a label expression (`:A|B`, `:(A|B)&!C`, `IS A`)
// and the range of a relationship pattern (`*1..2`). Returns the index of the
// first token before it.
function skipLabelExpressionBack(tokens, i) {
  let j = i;
  while (j >= 0) {
    const t = tokens[j];
    if (
      t.tokenType === 'label' ||
      (t.tokenType === 'operator' && (LABEL_EXPR_OPS.has(t.token) || RANGE_OPS.has(t.token))) ||
      t.tokenType === 'numberLiteral' ||
      isTok(t, 'keyword', 'IS') ||
      isTok(t, 'bracket', ')')
    ) {
      j--;
    } else if (isTok(t, 'bracket', '(')) {
      const before = tokens[j - 1];
      const groups =
        before && ((before.tokenType === 'operator' && LABEL_EXPR_OPS.has(before.token)) || isTok(before, 'keyword', 'IS'));
      if (!groups) return j;
      j--;
    } else {
      return j;
    }
  }
  return j;
}

// What the element that owns tokens[i] is: 'node' or 'rel' for a pattern
// element `(v:...` / `[v:...`, the variable's type for a predicate `v:Label`
// (WHERE, SET, REMOVE), else null.
function ownerKind(tokens, i, symbols, { patternOnly = false } = {}) {
  let j = skipLabelExpressionBack(tokens, i);
  let t = tokens[j];
  let variable = null;
  if (t && t.tokenType === 'variable') {
    variable = t;
    j--;
    t = tokens[j];
  }
  if (isTok(t, 'bracket', '[')) {
    return isTok(tokens[j - 1], 'separator', '-') ? 'rel' : patternOnly ? null : variable && symbolTypeAt(symbols, variable.position.startOffset);
  }
  if (isTok(t, 'bracket', '(')) {
    const before = tokens[j - 1];
    const call = before && ['function', 'procedure', 'predicateFunction', 'namespace'].includes(before.tokenType);
    if (!call) return 'node';
  }
  if (patternOnly || !variable) return null;
  return symbolTypeAt(symbols, variable.position.startOffset);
}

// Index of the innermost bracket still open at tokens[i] (walking back), or -1.
function enclosingOpen(tokens, i) {
  let depth = 0;
  for (let j = i; j >= 0; j--) {
    const b = tokens[j];
    if (b.tokenType !== 'bracket') continue;
    if (b.token === '}' || b.token === ']' || b.token === ')') depth++;
    else if (depth > 0) depth--;
    else return j;
  }
  return -1;
}

function tokenVocabProblems(text, vocab, symbols) {
  let tokens;
  try {
    tokens = highlightSyntax(text, { consoleCommandsEnabled: false });
  } catch {
    return [];
  }
  const labels = new Set(vocab.labels);
  const relTypes = new Set(vocab.relationshipTypes);
  const propertyKeys = new Set(vocab.propertyKeys);
  const problems = [];
  const at = (t, message) =>
    problems.push({ offset: t.position.startOffset, line: t.position.line + 1, col: t.position.startCharacter + 1, message });

  tokens.forEach((t, i) => {
    if (t.tokenType === 'label') {
      const name = unquote(t.token);
      const kind = ownerKind(tokens, i, symbols);
      if (kind === 'node' && !labels.has(name)) at(t, `Label ${t.token} is not in the vocab`);
      else if (kind === 'rel' && !relTypes.has(name)) at(t, `Relationship type ${t.token} is not in the vocab`);
      else if (kind !== 'node' && kind !== 'rel' && !labels.has(name) && !relTypes.has(name)) {
        at(t, `Label or relationship type ${t.token} is not in the vocab`);
      }
    } else if (t.tokenType === 'property') {
      const name = unquote(t.token);
      if (propertyKeys.has(name)) return;
      const prev = tokens[i - 1];
      if (isTok(prev, 'operator', '.')) {
        // `v.key`: a property only when v is a node or relationship variable.
        let owner = tokens[i - 2];
        if (isTok(owner, 'bracket', '{') || isTok(owner, 'separator', ',')) {
          // `v {.key, ...}`: a map projection of v.
          const open = enclosingOpen(tokens, i - 1);
          owner = open > 0 && isTok(tokens[open], 'bracket', '{') ? tokens[open - 1] : null;
        } else if (isTok(tokens[i - 3], 'operator', '.')) {
          owner = null; // `x.y.key`
        }
        if (owner?.tokenType === 'variable' && symbolTypeAt(symbols, owner.position.startOffset)) {
          at(t, `Property key ${t.token} is not in the vocab`);
        }
      } else if (isTok(tokens[i + 1], 'operator', ':')) {
        // `{key: ...}`: a property only in a node or relationship pattern.
        const open = enclosingOpen(tokens, i - 1);
        if (open > 0 && isTok(tokens[open], 'bracket', '{') && ownerKind(tokens, open - 1, symbols, { patternOnly: true })) {
          at(t, `Property key ${t.token} is not in the vocab`);
        }
      }
    }
  });
  return problems;
}

function lineCol(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return [line, offset - (before.lastIndexOf('\n') + 1) + 1];
}

const PROPERTY_NOT_PRESENT =
  / is not present in the database\. Make sure you didn't misspell it/;

// Upstream bug workaround: inside a node/relationship pattern, every property
// key is attributed to the pattern's variable, so in
// `MATCH (a:Node {uid: row.a})` the map key `a` of `row.a` is reported as an
// unknown property of node `a`. For an unknown-property warning on a
// `x.key` access we look up `x` ourselves and keep the warning only when `x`
// is a node or relationship variable.
function isFalsePropertyWarning(d, text, symbols) {
  if (
    d.severity !== 2 ||
    !PROPERTY_NOT_PRESENT.test(d.message) ||
    /^(Label|Relationship type|Label or relationship type|Function|Procedure) /.test(d.message) ||
    !d.offsets
  ) {
    return false;
  }
  let i = d.offsets.start - 1;
  while (i >= 0 && /\s/.test(text[i])) i--;
  if (text[i] !== '.') return false; // a map key in a pattern: `{uid: ...}`
  i--;
  while (i >= 0 && /\s/.test(text[i])) i--;
  let end = i + 1;
  let start;
  if (text[i] === '`') {
    start = text.lastIndexOf('`', i - 1);
    if (start < 0) return false;
  } else {
    start = i;
    while (start >= 0 && /[\p{L}\p{N}_]/u.test(text[start])) start--;
    start++;
    if (start === end) return true; // `(expr).key`, `$param.key`: not a node variable
  }
  let before = start - 1;
  while (before >= 0 && /\s/.test(text[before])) before--;
  if (before >= 0 && (text[before] === '.' || text[before] === '$')) return true; // `x.y.key`, `$p.key`
  const symbol = symbols.find((s) => s.references.includes(start) || s.definitionPosition === start);
  if (!symbol || symbol.types.length === 0) return true;
  return !symbol.types.every((t) => t === 'Node' || t === 'Relationship');
}

function oneLine(message) {
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

// Returns [{line, col, severity, message}] (1-based line and column).
function lintFile(file, { catalog, vocab }) {
  const problems = [];
  const add = (line, col, severity, message) => problems.push({ line, col, severity, message });
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    add(1, 1, 'error', `cannot read file: ${e.message}`);
    return problems;
  }
  const { masked, semicolons } = maskComments(text);
  if (masked.replace(/[\s;]/g, '') === '') {
    add(1, 1, 'error', 'file contains no Cypher statement');
    return problems;
  }
  const dbSchema = {
    parameters: Object.fromEntries(parseParameters(text, false).map((p) => [p, null])),
  };
  if (catalog) {
    dbSchema.functions = catalog.functions;
    dbSchema.procedures = catalog.procedures;
  }
  if (vocab) Object.assign(dbSchema, vocab);

  let result;
  try {
    result = lintCypherQuery(text, dbSchema, { consoleCommandsEnabled: false });
  } catch (e) {
    add(1, 1, 'error', `linter crashed: ${e?.message ?? e}`);
    return problems;
  }
  const symbols = result.symbolTables.flat();
  const seen = new Set();
  const vocabOffsets = new Set(); // names already reported as unknown
  for (const d of result.diagnostics) {
    if (isFalsePropertyWarning(d, text, symbols)) continue;
    // The linter's positions are 0-based; clamp its "whole query" fallback (-1).
    const line = Math.max(0, d.range.start.line) + 1;
    const col = Math.max(0, d.range.start.character) + 1;
    const severity = SEVERITY_NAMES[d.severity] ?? 'error';
    const key = `${line}:${col}:${severity}:${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (PROPERTY_NOT_PRESENT.test(d.message) && d.offsets) vocabOffsets.add(d.offsets.start);
    add(line, col, severity, d.message);
  }
  if (vocab) {
    const more = [
      ...tokenVocabProblems(text, vocab, symbols),
      ...ddlVocabProblems(masked, semicolons, vocab).map((p) => {
        const [line, col] = lineCol(text, p.offset);
        return { ...p, line, col };
      }),
    ];
    for (const p of more) {
      if (vocabOffsets.has(p.offset)) continue;
      vocabOffsets.add(p.offset);
      add(p.line, p.col, 'warning', p.message);
    }
  }
  return problems;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const vocab = opts.vocab ? loadVocab(opts.vocab) : null;

  // Signatures of Neo4j's built-in functions and procedures (plus APOC and
  // GDS), shipped with the package: enables "unknown function" errors and
  // deprecated-function warnings.
  let catalog = opts.catalog ? testData?.mockSchema : undefined;
  if (!(catalog?.functions && catalog?.procedures)) catalog = undefined;
  if (opts.catalog && !catalog) {
    process.stderr.write('cypherlint: note: package has no function catalog; function/procedure names are not checked\n');
  }

  const files = collectFiles(opts.paths);
  if (files.length === 0) {
    process.stderr.write(
      `cypherlint: no .cypher files found under ${opts.paths.join(', ')} ` +
        `(excluding *${EXCLUDED_PATH_PART}*): a lint that checks nothing fails\n`,
    );
    process.stdout.write('cypher lint: 0 files, 0 errors\n');
    process.exitCode = 1;
    return;
  }

  const counts = { error: 0, warning: 0, info: 0, hint: 0 };
  for (const file of files) {
    const problems = lintFile(file, { catalog, vocab });
    problems.sort((a, b) => a.line - b.line || a.col - b.col);
    for (const { line, col, severity, message } of problems) {
      counts[severity]++;
      process.stdout.write(`${file}:${line}:${col}: ${severity}: ${oneLine(message)}\n`);
    }
  }

  const extra = [];
  if (counts.info) extra.push(`${counts.info} info`);
  if (counts.hint) extra.push(`${counts.hint} hints`);
  const plural = (n, w) => `${n} ${w}${n === 1 ? '' : 's'}`;
  process.stdout.write(
    `cypher lint: ${plural(files.length, 'file')}, ${plural(counts.error, 'error')}, ` +
      `${plural(counts.warning, 'warning')}${extra.length ? ', ' + extra.join(', ') : ''}\n`,
  );
  // Errors and warnings both fail (see README); info and hints do not.
  process.exitCode = counts.error + counts.warning > 0 ? 1 : 0;
}

main();
