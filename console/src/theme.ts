import { defaultTheme, type RaThemeOptions } from 'react-admin';

/** react-admin's theme with colours that keep text contrast at or above 4.5:1 (WCAG AA). */
export const theme: RaThemeOptions = {
  ...defaultTheme,
  palette: {
    ...defaultTheme.palette,
    primary: { main: '#1565c0' },
    secondary: { main: '#37474f' },
    text: { primary: 'rgba(0, 0, 0, 0.87)', secondary: 'rgba(0, 0, 0, 0.68)' },
  },
};
