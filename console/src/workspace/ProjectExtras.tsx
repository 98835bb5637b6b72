import GridViewIcon from '@mui/icons-material/GridView';
import { Box, Button } from '@mui/material';
import { usePermissions, useRecordContext } from 'react-admin';
import { Link } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import ProjectGallery from '../cms/ProjectGallery';

/** Under a project's fields: a way to its availability board (for crm readers), then its gallery. */
export default function ProjectExtras() {
  const project = useRecordContext();
  const { permissions } = usePermissions<Permission[]>();
  return (
    <>
      {project && can(permissions, 'crm', 'read') ? (
        <Box sx={{ px: 2, pb: 1 }}>
          <Button component={Link} to={`/crm/availability/${project.id}`} variant="outlined" startIcon={<GridViewIcon />}>Availability board</Button>
        </Box>
      ) : null}
      <ProjectGallery />
    </>
  );
}
