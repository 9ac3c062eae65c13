import { Component, type ReactNode } from "react";

/** The router's default error screen (spec section 8): a heading and the
 *  status or message. Used for render errors on the server and the client. */
export function ErrorScreen({ status, message }: { status?: number; message: string }) {
  return (
    <div className="mx-auto max-w-3xl px-4 py-16">
      <h2 className="text-2xl font-bold">Unexpected Application Error!</h2>
      <h3 className="mt-4 font-mono text-lg text-red-700">{status ? `${status} ${message}` : message}</h3>
    </div>
  );
}

interface State {
  error: Error | null;
}

/** Catches a page that throws while rendering in the browser. */
export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  state: State = { error: null };
  static getDerivedStateFromError(error: Error): State {
    return { error };
  }
  render() {
    return this.state.error ? <ErrorScreen message={this.state.error.message} /> : this.props.children;
  }
}
