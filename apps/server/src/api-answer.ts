import { usageRanges } from '@gatehouse/collector';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';

/** The period parameter of the dashboard's endpoints (usage.ts, analytics.ts). */
export const range = z
  .enum(usageRanges, { error: `must be one of ${usageRanges.join(', ')}` })
  .default('24h');
export const rangeQuery = z.strictObject({ range });

/** One message naming every bad parameter: "range must be one of …; limit must be …". */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => `${key} is not a parameter of this endpoint`);
    const name = issue.path.map(String).join('.') || 'the request';
    return [`${name} ${issue.message}`];
  });
  return `${[...new Set(parts)].join('; ')}.`;
}

export class BadRequest extends Error {}

export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequest(describeIssues(result.error));
  return result.data;
}

/** What the /usage endpoints share: parameter checks and answers. */
type Handler = (req: Request) => Promise<unknown>;

/** JSON, never cached; a BadRequest becomes 400 with its message, anything else goes to the app's error handler. */
export function answer(handler: Handler) {
  return async (req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    try {
      const body = await handler(req);
      if (body === null) {
        res.status(404).json({ error: 'not_found', message: 'There is no session with this id.' });
        return;
      }
      res.json(body);
    } catch (error) {
      if (error instanceof BadRequest) {
        res.status(400).json({ error: 'invalid_request', message: error.message });
        return;
      }
      next(error);
    }
  };
}
