import { usePermissions } from 'react-admin';
import { Navigate } from 'react-router-dom';
import type { Permission } from '../api/authProvider';
import Dashboard from '../dashboard/Dashboard';
import { homeIsMyDay } from './access';

/** The home page ("/"): My day or the dashboard, by the permissions (nothing until they are known). */
export default function Home() {
  const { permissions, isPending } = usePermissions<Permission[]>();
  if (isPending) return null;
  return homeIsMyDay(permissions) ? <Navigate to="/my-day" replace /> : <Dashboard />;
}
