import { Component, type ErrorInfo, type ReactNode } from "react";
import { errorHeading, internalError } from "../../content/site/messages.json";

/** What a visitor is told when a page breaks: the status and a generic
 *  message, never the exception's own text (that goes to the log). */
export const GENERIC_ERROR = { status: 500, message: internalError } as const;

/** The router's default error screen (spec section 8): a heading and the
 *  status or message. Used for render errors on the server and the client,
 *  and, rendered at build time, for the server's own error pages (a render
 *  that could not run: server/render/document.rs). */
export function ErrorScreen({ status, message }: { status?: number; message: string }) {
  return (
    <div className="mx-auto max-w-3xl px-4 py-16">
      <h2 className="text-2xl font-bold">{errorHeading}</h2>
      <h3 className="mt-4 font-mono text-lg text-red-700">{status ? `${status} ${message}` : message}</h3>
    </div>
  );
}

interface State {
  error: Error | null;
  /** The view the error belongs to. */
  view: string;
}

interface BoundaryProps {
  children: ReactNode;
  /** The view on screen (path and query): another view tries the page
   *  again, without remounting it (focus stays where it was). */
  view: string;
}

/** Catches a page that throws while rendering in the browser: the visitor
 *  sees the spec's screen, the console gets the detail. */
export class ErrorBoundary extends Component<BoundaryProps, State> {
  state: State = { error: null, view: this.props.view };
  static getDerivedStateFromError(error: Error): Partial<State> {
    return { error };
  }
  static getDerivedStateFromProps(props: BoundaryProps, state: State): Partial<State> | null {
    return props.view === state.view ? null : { error: null, view: props.view };
  }
  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error("A page failed to render:", error, info.componentStack);
  }
  render() {
    return this.state.error ? <ErrorScreen {...GENERIC_ERROR} /> : this.props.children;
  }
}
