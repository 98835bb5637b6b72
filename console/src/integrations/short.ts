/**
 * A text short enough for the app bar's title (which does not wrap, and would widen a 375 px page): cut with "…".
 * The whole text is on the page below it.
 */
export function short(text: string, max = 28): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A webhook's URL as its host (and port), the part that tells endpoints apart in a title. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}
