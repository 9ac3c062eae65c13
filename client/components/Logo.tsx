/** The site's mark: a coin with a community dot pattern, drawn inline so the
 *  header needs no image request. */
export function Logo({ className }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" className={className} aria-hidden="true">
      <circle cx="16" cy="16" r="15" fill="#1f5ad6" />
      <circle cx="16" cy="16" r="10" fill="none" stroke="#fff" strokeWidth="2" />
      <circle cx="16" cy="11" r="2" fill="#fff" />
      <circle cx="11.5" cy="19" r="2" fill="#fff" />
      <circle cx="20.5" cy="19" r="2" fill="#fff" />
    </svg>
  );
}
