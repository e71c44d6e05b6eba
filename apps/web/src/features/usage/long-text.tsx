/** Beyond this many characters a value is cut, with the whole of it one click away. */
export const SHORT_TEXT_LENGTH = 160;

/**
 * A value the browser sent (a page name, a message, a target), which anyone can make as long as the
 * SDK allows (32,768 characters): short ones as they are, long ones cut, with the full text in a
 * disclosure. The CSS lets either wrap anywhere, so no value can make the page wider than the screen.
 */
export function LongText({ text, max = SHORT_TEXT_LENGTH }: { text: string; max?: number }) {
  if (text.length <= max) return <span className="long-text">{text}</span>;
  return (
    <details className="long-text">
      <summary>{text.slice(0, max)}…</summary>
      <span className="long-text-full">{text}</span>
    </details>
  );
}
