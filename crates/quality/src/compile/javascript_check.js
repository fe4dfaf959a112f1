// atto's JavaScript check: the syntax of the files named in argv, none of them run.
//
// CommonJS is compiled as Node's loader compiles it (a function of exports, require,
// module, __filename, __dirname); ES modules with vm.SourceTextModule, which parses but
// neither links nor evaluates. `.mjs` is a module, `.cjs` is CommonJS, and a `.js` file
// passes if it parses as either (bundlers accept both), its error taken from the kind the
// nearest package.json's "type" or its own import/export statements say it is. A file that
// stops at `<` is reported as possibly JSX for a JSX parser to judge. Prints one JSON
// object per finding, then {"done": N}.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const MAX_FINDINGS = 200;
const CJS_PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname'];
let emitted = 0;
let omitted = 0;

// Node keeps a module's syntax error position in a private field that only its own
// stack decoration reads; without it (--expose-internals refused) the line is unknown.
let decorate = null;
try {
  decorate = require('internal/util').decorateErrorStack;
} catch {
  decorate = null;
}

function emit(record) {
  if (emitted >= MAX_FINDINGS) {
    omitted += 1;
    return;
  }
  emitted += 1;
  process.stdout.write(JSON.stringify(record) + '\n');
}

function lineOf(err) {
  if (decorate) {
    try {
      decorate(err);
    } catch {
      // keep the undecorated stack
    }
  }
  const first = String(err.stack || '').split('\n')[0];
  const match = /:(\d+)$/.exec(first);
  return match && !first.startsWith(err.name) ? Number(match[1]) : null;
}

function compile(kind, source, file) {
  try {
    if (kind === 'cjs') {
      vm.compileFunction(source, CJS_PARAMETERS, { filename: file });
    } else if (typeof vm.SourceTextModule === 'function') {
      new vm.SourceTextModule(source, { identifier: file });
    } else {
      return 'unsupported';
    }
    return null;
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return err;
  }
}

const packageTypes = new Map();
function packageType(directory) {
  const root = process.cwd();
  const seen = [];
  let found = null;
  for (let dir = directory; ; dir = path.dirname(dir)) {
    if (packageTypes.has(dir)) {
      found = packageTypes.get(dir);
      break;
    }
    seen.push(dir);
    try {
      const json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      found = typeof json.type === 'string' ? json.type : 'commonjs';
      break;
    } catch {
      // no package.json here, or not one Node can read: look further up
    }
    if (dir === root || path.dirname(dir) === dir || !dir.startsWith(root)) break;
  }
  for (const dir of seen) packageTypes.set(dir, found);
  return found;
}

function check(index, file) {
  const source = fs.readFileSync(file, 'utf8');
  const extension = path.extname(file).toLowerCase();
  let failure;
  if (extension === '.cjs' || extension === '.mjs') {
    failure = compile(extension === '.mjs' ? 'esm' : 'cjs', source, file);
  } else {
    const type = packageType(path.dirname(file));
    const looksModule = type === 'module' || /^\s*(import|export)\b/m.test(source);
    const first = looksModule ? 'esm' : 'cjs';
    const other = looksModule ? 'cjs' : 'esm';
    failure = compile(first, source, file);
    if (failure !== null && compile(other, source, file) === null) failure = null;
  }
  if (failure === null) return;
  if (failure === 'unsupported') {
    emit({ i: index, kind: 'warning', msg: 'not checked: this Node cannot parse ES modules' });
  } else if (/^Unexpected token '<'/.test(failure.message)) {
    emit({ i: index, jsx: true });
  } else {
    emit({ i: index, line: lineOf(failure), msg: `${failure.name}: ${failure.message}` });
  }
}

const files = process.argv.slice(1);
files.forEach((file, index) => {
  try {
    check(index, file);
  } catch (err) {
    emit({ i: index, kind: 'warning', msg: `not checked: ${err && err.message}` });
  }
});
process.stdout.write(JSON.stringify({ done: files.length, omitted }) + '\n');
