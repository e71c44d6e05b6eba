import { Link } from 'wouter';

export function NotFoundPage() {
  return (
    <section className="page">
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
      <p className="actions">
        <Link className="button" href="/">
          Home
        </Link>
      </p>
    </section>
  );
}
