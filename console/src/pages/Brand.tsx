/** The mark and name, as on the built-in sign-in pages. */
export function Brand() {
  return (
    <span className="brand">
      <svg className="brand-mark" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
        <rect width="32" height="32" rx="7" fill="currentColor" />
        <path d="M6 21h20l-3 5H9z M9 18l7-12v12z M18 9l6 9h-6z" fill="#fff" />
      </svg>
      <span className="brand-name">Slipway</span>
    </span>
  );
}
