import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import ArrowForwardIcon from '@mui/icons-material/ArrowForward';
import DeleteIcon from '@mui/icons-material/Delete';
import UploadIcon from '@mui/icons-material/Upload';
import { Box, Button, Card, CardActions, CardContent, CardMedia, IconButton, Stack, TextField, Typography } from '@mui/material';
import { useRef, useState } from 'react';
import { Confirm, usePermissions, useRecordContext, useRefresh } from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { IMAGE_TYPES, upload } from '../shared/upload';
import { useApiAction } from '../shared/useApiAction';

type Image = { id: string; image_url: string; caption: string | null; display_order: number; house_model: string | null };
const GALLERY = '/api/cms/projects';

/**
 * A project's gallery: upload images (in one request, up to 50), move them earlier or later, remove them. The API
 * has no PATCH for a gallery image, so a move adds the two images again with swapped orders and removes the old ones.
 */
export default function ProjectGallery() {
  const record = useRecordContext<{ id: string; name: string; galleries: Image[] }>();
  const { permissions } = usePermissions<Permission[]>();
  const refresh = useRefresh();
  const { run, busy } = useApiAction();
  const files = useRef<HTMLInputElement>(null);
  const [caption, setCaption] = useState('');
  const [houseModel, setHouseModel] = useState('');
  const [removing, setRemoving] = useState<Image>();
  if (!record) return null;
  const images = record.galleries ?? [];
  const write = can(permissions, 'cms', 'write');
  const remove = can(permissions, 'cms', 'delete');
  const next = images.reduce((max, image) => Math.max(max, image.display_order + 1), 0);

  const add = async (chosen: FileList | null) => {
    if (!chosen?.length) return;
    const list = Array.from(chosen).slice(0, 50);
    await run(async () => {
      const stored = [];
      for (const file of list) stored.push(await upload(file));
      await api(`${GALLERY}/${record.id}/galleries`, {
        method: 'POST',
        body: { images: stored.map((file, i) => ({ image_url: file.path, display_order: next + i, caption: caption || null, house_model: houseModel || null })) },
      });
    }, `${list.length} image${list.length === 1 ? '' : 's'} added`);
    if (files.current) files.current.value = '';
    setCaption('');
    setHouseModel('');
    refresh();
  };

  const move = async (index: number, by: -1 | 1) => {
    const a = images[index];
    const b = images[index + by];
    if (!a || !b) return;
    const [orderA, orderB] = a.display_order !== b.display_order ? [b.display_order, a.display_order] : [Math.max(0, b.display_order + by), b.display_order];
    const again = (image: Image, display_order: number) => ({ image_url: image.image_url, caption: image.caption, house_model: image.house_model, display_order });
    await run(async () => {
      await api(`${GALLERY}/${record.id}/galleries`, { method: 'POST', body: { images: [again(a, orderA), again(b, orderB)] } });
      await api(`${GALLERY}/galleries/${a.id}`, { method: 'DELETE' });
      await api(`${GALLERY}/galleries/${b.id}`, { method: 'DELETE' });
    }, 'Order changed');
    refresh();
  };

  const confirmRemove = async () => {
    const image = removing!;
    setRemoving(undefined);
    await run(() => api(`${GALLERY}/galleries/${image.id}`, { method: 'DELETE' }), 'Image removed');
    refresh();
  };

  return (
    <Box component="section" aria-labelledby="gallery-title" sx={{ p: 2 }}>
      <Typography id="gallery-title" variant="h6" component="h2" gutterBottom>Gallery ({images.length})</Typography>
      {write ? (
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mb: 2, alignItems: { sm: 'center' } }}>
          <TextField size="small" label="Caption for new images" value={caption} onChange={(e) => setCaption(e.target.value)} />
          <TextField size="small" label="House model for new images" value={houseModel} onChange={(e) => setHouseModel(e.target.value)} />
          <Button variant="contained" startIcon={<UploadIcon />} disabled={busy} onClick={() => files.current?.click()}>Upload images</Button>
          <input ref={files} hidden multiple type="file" accept={IMAGE_TYPES} onChange={(e) => add(e.target.files)} />
        </Stack>
      ) : null}
      {images.length === 0 ? <Typography variant="body2">No images yet.</Typography> : null}
      <Box component="ol" aria-label="Gallery images in display order" sx={{ listStyle: 'none', p: 0, m: 0, display: 'grid', gap: 2, gridTemplateColumns: 'repeat(auto-fill, minmax(200px, 1fr))' }}>
        {images.map((image, index) => {
          const name = image.caption || `Image ${index + 1}`;
          return (
            <Card component="li" key={image.id} variant="outlined">
              <CardMedia component="img" height="140" image={image.image_url} alt={image.caption ?? `Gallery image ${index + 1} of ${record.name}`} sx={{ objectFit: 'cover' }} />
              <CardContent sx={{ py: 1 }}>
                <Typography variant="body2">{index + 1}. {name}</Typography>
                {image.house_model ? <Typography variant="caption" color="text.secondary">{image.house_model}</Typography> : null}
              </CardContent>
              <CardActions>
                {write && remove ? (
                  <>
                    <IconButton size="small" aria-label={`Move ${name} earlier`} disabled={busy || index === 0} onClick={() => move(index, -1)}><ArrowBackIcon fontSize="small" /></IconButton>
                    <IconButton size="small" aria-label={`Move ${name} later`} disabled={busy || index === images.length - 1} onClick={() => move(index, 1)}><ArrowForwardIcon fontSize="small" /></IconButton>
                  </>
                ) : null}
                {remove ? <IconButton size="small" aria-label={`Remove ${name}`} disabled={busy} onClick={() => setRemoving(image)}><DeleteIcon fontSize="small" /></IconButton> : null}
              </CardActions>
            </Card>
          );
        })}
      </Box>
      <Confirm isOpen={!!removing} title="Remove this image?" content="It leaves the project's gallery." confirm="Remove" onConfirm={confirmRemove} onClose={() => setRemoving(undefined)} />
    </Box>
  );
}
