import type { z } from 'zod';

/** One bad key of a failed parse: its dotted name (or what stands for the whole input) and what is wrong. */
export interface NamedIssue {
  name: string;
  message: string;
}

/**
 * Every bad key of a failed zod parse, each once, in the order zod found them: the one walk over zod's
 * issues behind every "names each bad key" message (the API's 400 answers, each process's environment,
 * the SPA's runtime configuration). `whole` names the input itself (an issue without a path);
 * `unknownKey` says what an unrecognised key is not.
 */
export function namedIssues(
  issues: readonly z.core.$ZodIssue[],
  words: { whole: string; unknownKey: string },
): NamedIssue[] {
  const named = issues.flatMap((issue): NamedIssue[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ name: key, message: `is not ${words.unknownKey}` }))
      : [{ name: issue.path.map(String).join('.') || words.whole, message: issue.message }],
  );
  const seen = new Set<string>();
  return named.filter(({ name, message }) => {
    const key = `${name}\u0000${message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The bad keys in one sentence, for an answer's error description: `path is required; a is not …`. */
export function issuesSentence(
  issues: readonly z.core.$ZodIssue[],
  words: { whole: string; unknownKey: string },
): string {
  return `${namedIssues(issues, words)
    .map(({ name, message }) => `${name} ${message}`)
    .join('; ')}.`;
}
