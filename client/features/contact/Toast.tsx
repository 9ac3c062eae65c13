import { X } from "lucide-react";
import { useCallback, useEffect, useRef, useState } from "react";

export const TOAST_DURATION_MS = 5000;

export interface ToastInput {
  title: string;
  description?: string;
  /** An error: red, and announced at once (role="alert"). */
  variant?: "default" | "destructive";
}

export interface ToastItem extends ToastInput {
  id: number;
}

/** Local toast state for a page: `toast()` adds one, `dismiss()` removes it. */
export function useToasts() {
  const [toasts, setToasts] = useState<ToastItem[]>([]);
  const next = useRef(1);
  const toast = useCallback((input: ToastInput) => {
    const id = next.current++;
    setToasts((list) => [...list, { ...input, id }]);
    return id;
  }, []);
  const dismiss = useCallback((id: number) => {
    setToasts((list) => list.filter((t) => t.id !== id));
  }, []);
  return { toasts, toast, dismiss };
}

interface ToasterProps {
  toasts: ToastItem[];
  onDismiss: (id: number) => void;
}

/**
 * Where toasts appear (bottom right). Ordinary toasts go into a polite live
 * region that is always present, so screen readers announce what is added;
 * destructive ones are rendered with role="alert" and interrupt.
 */
export function Toaster({ toasts, onDismiss }: ToasterProps) {
  const polite = toasts.filter((t) => t.variant !== "destructive");
  const urgent = toasts.filter((t) => t.variant === "destructive");
  return (
    <div className="pointer-events-none fixed inset-x-0 bottom-0 z-50 flex flex-col items-center gap-2 p-4 sm:items-end">
      <div role="status" aria-live="polite" className="flex w-full flex-col items-center gap-2 sm:items-end">
        {polite.map((t) => (
          <Toast key={t.id} toast={t} onDismiss={onDismiss} />
        ))}
      </div>
      {urgent.map((t) => (
        <div key={t.id} role="alert" className="flex w-full justify-center sm:justify-end">
          <Toast toast={t} onDismiss={onDismiss} />
        </div>
      ))}
    </div>
  );
}

function Toast({ toast, onDismiss }: { toast: ToastItem; onDismiss: (id: number) => void }) {
  useEffect(() => {
    const t = setTimeout(() => onDismiss(toast.id), TOAST_DURATION_MS);
    return () => clearTimeout(t);
  }, [toast.id, onDismiss]);

  const destructive = toast.variant === "destructive";
  return (
    <div
      className={`pointer-events-auto flex w-full max-w-sm items-start gap-3 rounded-xl border p-4 shadow-lg ${
        destructive ? "border-red-700 bg-red-600 text-white" : "border-slate-200 bg-white text-slate-900"
      }`}
    >
      <div className="flex-1">
        <p className="text-sm font-semibold">{toast.title}</p>
        {toast.description && (
          <p className={`mt-1 text-sm ${destructive ? "text-red-50" : "text-slate-600"}`}>{toast.description}</p>
        )}
      </div>
      <button
        type="button"
        onClick={() => onDismiss(toast.id)}
        aria-label="Close notification"
        className={`rounded-md p-1 ${destructive ? "text-white hover:bg-red-700" : "text-slate-500 hover:bg-slate-100 hover:text-slate-900"}`}
      >
        <X className="h-4 w-4" aria-hidden="true" />
      </button>
    </div>
  );
}
