import { Component, type ErrorInfo, type ReactNode } from 'react';
import { telemetry } from '../telemetry/telemetry';

interface Props {
  children: ReactNode;
  /** Which boundary caught it, reported with the error: the root one or a route's. */
  boundary: 'root' | 'route';
}

/** Catches render errors so the user sees a sentence and a way on, never a blank page. */
export class ErrorBoundary extends Component<Props, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    telemetry.trackException(error, {
      boundary: this.props.boundary,
      componentStack: info.componentStack ?? '',
    });
  }

  override render() {
    if (!this.state.failed) return this.props.children;
    return (
      <section className="page" role="alert">
        <h1>Something went wrong</h1>
        <p>This part of the page could not be shown. Reload the page, or go back to the home page.</p>
        <p className="actions">
          <a className="button" href="/">
            Home
          </a>
        </p>
      </section>
    );
  }
}
