import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  children: ReactNode;
}

/** Catches render errors so the user sees a sentence and a way on, never a blank page. */
export class ErrorBoundary extends Component<Props, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override componentDidCatch(_error: Error, _info: ErrorInfo) {
    // Reported to telemetry once the telemetry layer is wired (see src/telemetry).
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
