import { defaultTheme, type RaThemeOptions } from 'react-admin';

/** react-admin's theme with colours that keep text contrast at or above 4.5:1 (WCAG AA). */
export const theme: RaThemeOptions = {
  ...defaultTheme,
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
