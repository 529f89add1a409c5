// "Latest request wins": a read the page starts again before the last one answered drops the
// earlier answer when it comes late.

/** A gate; each call starts a request and returns its check, true while no later one began. */
export function latest() {
  const at = { n: 0 };
  return () => {
    const mine = ++at.n;
    return () => mine === at.n;
  };
}
