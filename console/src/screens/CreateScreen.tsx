export { ResourceCreate as default } from './Form';
