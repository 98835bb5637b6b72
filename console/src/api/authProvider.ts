import { type AuthProvider, HttpError } from 'react-admin';
import { RESOURCES } from '../resources/declarations';
import type { Module } from '../resources/types';
import { api } from './http';
import { queryClient } from './queryClient';

export type Permission = { module: string; can_read: boolean; can_write: boolean; can_delete: boolean };
export type SessionInfo = {
  user: { id: string; email: string; name: string; image: string | null; emailVerified: boolean; twoFactorEnabled: boolean; department: { id: string; name: string } | null };
  session: { expiresAt: string };
  permissions: Permission[];
};

/** Thrown by login() when the account asks for its second factor: the sign-in page then asks for the code. */
export class TwoFactorRequired extends Error {
  constructor() {
    super('Enter the code from your authenticator app');
  }
}

export const SESSION_ENDED = 'Your session has expired or was ended. Please sign in again.';

// Why the user was sent to the sign-in page, for that page to say. react-admin notifies only while the user still
// counts as signed in, which after a revoked session they no longer do; the sign-in page shows it instead.
let signOutReason: string | undefined;
export const lastSignOutReason = () => signOutReason;

// Signed out on purpose: an answer of 401 still on its way (a dashboard read that crossed the sign-out) says nothing
// new, and must neither call the session ended nor send the person back to sign-in from where they went next (seen:
// "Forgot password?" clicked at once after signing out, then the sign-in page again a moment later).
let signedOut = false;

// GET /api/auth/session counts against the read limit like any other GET: asked again at most once a minute, and at
// once after anything that changes it (sign-in, sign-out, a 401).
const FRESH_MS = 60_000;
let cached: { at: number; value: Promise<SessionInfo | null> } | undefined;
let last: SessionInfo | null = null;

export function currentSession(force = false): Promise<SessionInfo | null> {
  if (!cached || force || Date.now() - cached.at > FRESH_MS) {
    const value = api<SessionInfo>('/api/auth/session').then(
      (info) => {
        // Someone else signed in on this browser (another tab): nothing cached for the previous user may decide
        // what this one sees (react-admin keeps canAccess answers per resource and action, not per user).
        if (last && last.user.id !== info.user.id) void queryClient.invalidateQueries();
        signedOut = false;
        return (last = info);
      },
      (error) => {
        if (error instanceof HttpError && error.status === 401) return (last = null);
        cached = undefined;
        // A 429 or a network hiccup does not sign anyone out.
        if (last) return last;
        throw error;
      },
    );
    cached = { at: Date.now(), value };
  }
  return cached.value;
}

export const forgetSession = () => {
  cached = undefined;
};

/** The user's flags on a module. */
export function can(permissions: Permission[] | undefined, module: Module, flag: 'read' | 'write' | 'delete'): boolean {
  const entry = permissions?.find((p) => p.module === module);
  return !!entry && (flag === 'read' ? entry.can_read : flag === 'write' ? entry.can_write : entry.can_delete);
}

const FLAG_OF_ACTION: Record<string, 'read' | 'write' | 'delete'> = {
  list: 'read', show: 'read', export: 'read', create: 'write', edit: 'write', delete: 'delete',
};

/** Sign-in, the second factor, sign-out and the user's module permissions, all from the API (CONTRACT §4, §5). */
export const authProvider: AuthProvider = {
  async login(params: { email?: string; password?: string; code?: string; backupCode?: string }) {
    if (params.code !== undefined || params.backupCode !== undefined) {
      const body = params.code !== undefined ? { code: params.code.replace(/\s+/g, '') } : { backupCode: params.backupCode!.trim() };
      await api('/api/auth/verify-2fa', { method: 'POST', body });
    } else {
      const answer = await api<{ twoFactorRequired?: boolean }>('/api/auth/login', { method: 'POST', body: { email: params.email, password: params.password } });
      if (answer.twoFactorRequired) throw new TwoFactorRequired();
    }
    // Answers cached for whoever used this page before (permissions, canAccess, lists) go with them: react-admin's
    // useLogin only invalidates getPermissions, and its canAccess answers are keyed by resource and action alone.
    queryClient.clear();
    await currentSession(true);
    signOutReason = undefined;
  },

  async logout() {
    const hadSession = last !== null;
    const signedIn = hadSession && !signOutReason;
    last = null;
    // Signed out already (a visit before sign-in: checkAuth found no session and react-admin logs out): the answer
    // in hand, "nobody", stays; asking again would only repeat GET /api/auth/session for the sign-in page.
    if (hadSession) forgetSession();
    if (signedIn) {
      signedOut = true;
      await api('/api/auth/logout', { method: 'POST' }).catch(() => undefined);
    }
  },

  async checkAuth() {
    const hadSession = last !== null;
    const info = await currentSession();
    if (!info) {
      if (hadSession) signOutReason = SESSION_ENDED;
      throw { message: false, redirectTo: '/login' };
    }
  },

  async checkError(error: { status?: number }) {
    if (error?.status === 401) {
      if (signedOut) return;
      forgetSession();
      signOutReason = SESSION_ENDED;
      throw { message: SESSION_ENDED, redirectTo: '/login' };
    }
    // 403 (no permission) and 429 (too many requests) keep the user signed in; their notification says why.
  },

  async getIdentity() {
    const info = await currentSession();
    if (!info) throw new HttpError('Authentication required', 401);
    return { id: info.user.id, fullName: info.user.name, avatar: info.user.image ?? undefined, email: info.user.email };
  },

  async getPermissions() {
    return (await currentSession())?.permissions ?? [];
  },

  async canAccess({ resource, action, record }) {
    const spec = RESOURCES.find((r) => r.name === resource);
    if (!spec) return true;
    const flag = FLAG_OF_ACTION[action] ?? 'read';
    if (spec.readOnly && flag !== 'read' && !(flag === 'delete' && spec.deletable)) return false;
    // The API refuses these with 409; the console does not offer them.
    if (resource === 'campaigns' && record?.status === 'sent' && action !== 'show' && action !== 'list') return false;
    if (resource === 'inventory' && action === 'delete' && record && record.status !== 'available') return false;
    return can((await currentSession())?.permissions, spec.module, flag);
  },
};
