import { QueryClient } from '@tanstack/react-query';

/**
 * The console's one query cache (react-admin's data and its auth answers: permissions, canAccess, identity).
 * A refused request is not tried again: a 4xx will be refused again, and repeating a 429 only spends more of the
 * allowance (its notification says when to retry). Network failures and 5xx get one more try.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (failures, error) => failures < 1 && !((error as { status?: number }).status! >= 400 && (error as { status?: number }).status! < 500),
      staleTime: 10_000,
    },
  },
});
