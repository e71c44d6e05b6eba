#!/usr/bin/env node
// Before the end-to-end tests: checks every tool they need beyond npm (scripts/test-tools.mjs), installs
// the missing ones with apt-get on Debian as root, and otherwise says in one message what is missing and
// the command that brings it. Exits non-zero when Chromium is missing, or anything is in CI (CI=true);
// without CI, the tests that need a missing browser or provider are skipped, each with a line saying why.
//
//   node scripts/ensure-test-tools.mjs            every tool
//   node scripts/ensure-test-tools.mjs chromium   only these
import { TOOLS, inCi, installWithApt, installable, isDebian, isRoot, lacking } from './test-tools.mjs';

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(TOOLS);
for (const name of names) {
  if (!TOOLS[name]) {
    console.error(`Unknown tool "${name}"; known: ${Object.keys(TOOLS).join(', ')}.`);
    process.exit(2);
  }
}

let missing = names.filter((name) => lacking(name));
// Found, but a package of its own would serve better (Chromium's headless shell): installed where it can be.
const preferred = () =>
  names.flatMap((name) => {
    const prefer = TOOLS[name].find().prefer;
    return prefer ? [{ name, prefer }] : [];
  });
let better = preferred();
if ((missing.length > 0 || better.length > 0) && isDebian() && isRoot()) {
  installWithApt([...missing.filter(installable), ...better.map(({ name }) => name)]);
  missing = names.filter((name) => lacking(name));
  better = preferred();
}
for (const { name, prefer } of better)
  console.info(`${TOOLS[name].what} would run faster with Debian's ${prefer}.`);
if (missing.length === 0) process.exit(0);

const fatal = inCi() || missing.some((name) => TOOLS[name].required);
const consequence = fatal
  ? inCi()
    ? 'In CI every browser test must run: install them, then run the tests again.'
    : 'The browser tests cannot run without Chromium: install it, then run them again.'
  : 'The tests that need them are skipped (with CI=true they would fail the run).';
const lines = missing.map((name) => `  - ${lacking(name)}`);
(fatal ? console.error : console.warn)(`The end-to-end tests lack:\n${lines.join('\n')}\n${consequence}`);
process.exit(fatal ? 1 : 0);
