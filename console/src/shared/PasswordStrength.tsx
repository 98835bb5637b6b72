import { Box, LinearProgress, Typography } from '@mui/material';

/** The password policy the server enforces (CONTRACT §4), checked early for a friendlier message. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 8 || password.length > 128) return 'must be 8–128 characters';
  if (!/[A-Z]/.test(password) || !/[a-z]/.test(password) || !/\d/.test(password) || !/[^A-Za-z0-9]/.test(password)) {
    return 'needs an upper-case letter, a lower-case letter, a digit and another character';
  }
  return undefined;
}

/** SPEC.md's strength levels: weak (minimum met), medium (good length and variety), strong (long, varied). */
function strength(password: string): 0 | 1 | 2 | 3 {
  if (passwordProblem(password)) return 0;
  const classes = [/[A-Z]/, /[a-z]/, /\d/, /[^A-Za-z0-9]/].filter((r) => r.test(password)).length;
  const unique = new Set(password).size;
  if (password.length >= 16 && unique >= 10) return 3;
  if (password.length >= 12 && classes === 4 && unique >= 8) return 2;
  return 1;
}

const LEVELS = ['Too weak', 'Weak', 'Medium', 'Strong'] as const;
const COLORS = ['error', 'warning', 'info', 'success'] as const;

export function PasswordStrength({ password }: { password: string }) {
  if (!password) return null;
  const level = strength(password);
  return (
    <Box>
      <LinearProgress variant="determinate" value={(level / 3) * 100} color={COLORS[level]} aria-label="Password strength" aria-valuetext={LEVELS[level]} />
      <Typography variant="caption" color="text.secondary">Strength: {LEVELS[level]}</Typography>
    </Box>
  );
}
