/** Who did it, from where: the data layer's only notion of a caller (never an HTTP request). */
export type Actor = { userId: string | null; ip: string | null; userAgent: string | null };

/** The service itself (scheduled jobs): logged with no user. */
export const SYSTEM: Actor = { userId: null, ip: null, userAgent: null };

/** A user acting outside any request (the first administrator created at start-up). */
export const userActor = (userId: string): Actor => ({ userId, ip: null, userAgent: null });
