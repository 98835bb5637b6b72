import { defaultTheme, type RaThemeOptions } from 'react-admin';

/**
 * Whether the person asked their system for less motion (`prefers-reduced-motion`): then nothing slides, fades or
 * ripples; dialogs, menus and messages appear at once (WCAG 2.3.3). Read once, when the console loads.
 */
const reducedMotion = typeof window !== 'undefined' && typeof window.matchMedia === 'function' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;

const still: Pick<RaThemeOptions, 'transitions'> = {
  transitions: {
    create: () => 'none',
    duration: { shortest: 0, shorter: 0, short: 0, standard: 0, complex: 0, enteringScreen: 0, leavingScreen: 0 },
  },
};

/** react-admin's theme with colours that keep text contrast at or above 4.5:1 (WCAG AA). */
export const theme: RaThemeOptions = {
  ...defaultTheme,
  ...(reducedMotion ? still : {}),
  palette: {
    ...defaultTheme.palette,
    primary: { main: '#1565c0' },
    secondary: { main: '#37474f' },
    // MUI's #d32f2f falls under 4.5:1 on the grey of a form's toolbar (its Delete button).
    error: { main: '#b71c1c' },
    text: { primary: 'rgba(0, 0, 0, 0.87)', secondary: 'rgba(0, 0, 0, 0.68)' },
  },
  components: {
    ...defaultTheme.components,
    // No ripple on buttons, list items and tabs for someone who asked for less motion.
    ...(reducedMotion ? { MuiButtonBase: { defaultProps: { disableRipple: true } } } : {}),
    // Spinners and bars say what they are to a screen reader.
    MuiCircularProgress: { defaultProps: { 'aria-label': 'Loading' } },
    MuiLinearProgress: { defaultProps: { 'aria-label': 'Progress' } },
    // react-admin greys its "No … yet" page with the disabled text colour (2.7:1); readable text needs 4.5:1.
    RaEmpty: { styleOverrides: { root: { '& .RaEmpty-message': { color: 'rgba(0, 0, 0, 0.68)' } } } },
    // A read-only field's explanation ("cancelled is final") is text to read, not a disabled control.
    MuiFormHelperText: { styleOverrides: { root: { '&.Mui-disabled': { color: 'rgba(0, 0, 0, 0.68)' } } } },
    RaLoading: { styleOverrides: { root: { '& .RaLoading-message': { color: 'rgba(0, 0, 0, 0.68)' } } } },
  },
};
