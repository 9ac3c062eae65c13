import {
  cloneElement,
  useCallback,
  useEffect,
  useId,
  useRef,
  useState,
  type HTMLAttributes,
  type ReactElement,
  type ReactNode,
} from "react";

/** Spec section 9: a tooltip opens 700 ms after the pointer or focus arrives. */
export const TOOLTIP_DELAY_MS = 700;

interface TooltipProps {
  /** What the tooltip says; it also becomes the trigger's description. */
  content: ReactNode;
  /** One focusable element (a button or a link) that opens the tooltip. */
  children: ReactElement<HTMLAttributes<HTMLElement>>;
  side?: "top" | "bottom";
  /** Centre the bubble on the trigger, or line up its right edges (for
   *  triggers at the end of a line, so the bubble stays on screen). */
  align?: "center" | "end";
  delay?: number;
}

/**
 * A tooltip for the element it wraps. It opens after `delay` ms of hover or
 * keyboard focus and closes on leave, blur or Escape. The bubble is always in
 * the markup (hidden while closed), so the trigger's aria-describedby points
 * at a real element and server and client render the same thing.
 */
export function Tooltip({ content, children, side = "top", align = "center", delay = TOOLTIP_DELAY_MS }: TooltipProps) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const cancel = useCallback(() => {
    if (timer.current !== undefined) clearTimeout(timer.current);
    timer.current = undefined;
  }, []);
  const show = useCallback(() => {
    cancel();
    timer.current = setTimeout(() => setOpen(true), delay);
  }, [cancel, delay]);
  const hide = useCallback(() => {
    cancel();
    setOpen(false);
  }, [cancel]);

  useEffect(() => cancel, [cancel]);

  // Escape closes it even when it was opened by hovering (focus elsewhere).
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") hide();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open, hide]);

  const describedBy = [children.props["aria-describedby"], id].filter(Boolean).join(" ");
  const trigger = cloneElement(children, { "aria-describedby": describedBy });

  return (
    // Hover is tracked on the wrapper so the pointer can move onto the bubble
    // without closing it (WCAG 1.4.13). Escape on the trigger bubbles up to
    // the wrapper too, after the trigger's own onKeyDown, and closes it.
    <span
      className="relative inline-flex"
      onPointerEnter={show}
      onPointerLeave={hide}
      onFocus={show}
      onBlur={hide}
      onKeyDown={(e) => {
        if (e.key === "Escape") hide();
      }}
    >
      {trigger}
      <span
        id={id}
        role="tooltip"
        hidden={!open}
        className={`absolute z-30 w-64 max-w-[80vw] rounded-lg bg-slate-900 px-3 py-2 text-left text-xs font-normal leading-relaxed text-white shadow-lg ${
          side === "top" ? "bottom-full mb-2" : "top-full mt-2"
        } ${align === "center" ? "left-1/2 -translate-x-1/2" : "right-0"}`}
      >
        {content}
      </span>
    </span>
  );
}
