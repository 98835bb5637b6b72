// oidc-provider ships no types; the tests use its constructor and `listen` only (test/sso-idp.ts).
declare module 'oidc-provider';
