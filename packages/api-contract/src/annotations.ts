import { z } from 'zod';
import { checkPeriod, periodFields, periodQueryFields, timeSchema } from './usage.js';

/*
 * Annotations: an admin marks a moment (a release, an incident) with a short note, and the
 * mark shows on every time chart of a period that holds it (docs/decisions/0085-annotations.md).
 */

/** The longest note, in UTF-16 code units (what a browser's maxlength counts): a line, as PostHog's. */
export const ANNOTATION_NOTE_MAX = 200;

/** Why a note is refused, or undefined: text of one line, 1 to ANNOTATION_NOTE_MAX characters once trimmed. */
export function annotationNoteProblem(note: string): string | undefined {
  const trimmed = note.trim();
  if (trimmed === '') return 'must not be empty';
  if (trimmed.length > ANNOTATION_NOTE_MAX) return `must be at most ${ANNOTATION_NOTE_MAX} characters`;
  // One line of text: no control characters (line breaks, NUL, escapes), nothing a terminal or a log runs.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(trimmed)) return 'must be one line of text';
  return undefined;
}

const note = z
  .string({ error: 'must be text' })
  .superRefine((value, ctx) => {
    const problem = annotationNoteProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((value) => value.trim())
  .meta({
    description: `What happened: one line of text, 1 to ${ANNOTATION_NOTE_MAX} characters (trimmed); shown as text, never as HTML`,
  });

export const annotationSchema = z
  .strictObject({
    id: z.uuid(),
    time: timeSchema.meta({ description: 'The moment marked (ISO 8601, UTC)' }),
    note: z.string(),
    author: z.string().nullable().meta({
      description:
        "The pseudonymous user id of the admin who wrote it (the one the per-user export and erasure take); null once that user's data was erased: the note stays",
    }),
    mine: z.boolean().meta({ description: 'Written by the caller' }),
    createdAt: timeSchema.meta({ description: 'When it was written' }),
  })
  .meta({ id: 'Annotation' });

/** Most annotations a period answers: far more than a chart can show. */
export const ANNOTATIONS_LIMIT = 1000;

/** The annotations of a chart period: the same period the charts of the same query answer for. */
export const annotationsSchema = z
  .strictObject({
    ...periodFields,
    annotations: z
      .array(annotationSchema)
      .meta({ description: `Every annotation of the period, oldest first (at most ${ANNOTATIONS_LIMIT})` }),
  })
  .meta({ id: 'Annotations' });

/** The period only: annotations are about the product, not about a segment of its users. */
export const annotationsQuery = z.strictObject({ ...periodQueryFields }).superRefine(checkPeriod);

export const newAnnotationBody = z
  .strictObject({
    time: z.iso
      .datetime({ offset: true, error: 'must be an ISO 8601 time' })
      .meta({ description: 'The moment to mark (ISO 8601; stored in UTC)' }),
    note,
  })
  .meta({ description: "The author is the caller (from the access token), never the body's" });

export const annotationParams = z.strictObject({
  id: z.uuid({ error: 'must be an annotation id (a UUID)' }).meta({ description: 'The annotation id' }),
});

export const annotationDeletedSchema = z
  .strictObject({ deleted: z.uuid().meta({ description: 'The id of the annotation deleted' }) })
  .meta({ id: 'AnnotationDeleted' });

export type Annotation = z.infer<typeof annotationSchema>;
export type Annotations = z.infer<typeof annotationsSchema>;
export type NewAnnotation = z.output<typeof newAnnotationBody>;
