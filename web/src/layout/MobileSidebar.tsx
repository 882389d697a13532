import { Drawer } from 'antd'
import Sidebar from './Sidebar'

/** Mobile mode: the sidebar slides in over the page and closes after a pick. */
export default function MobileSidebar({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Drawer
      placement="left"
      open={open}
      onClose={onClose}
      size={220}
      closable={false}
      styles={{ body: { padding: 0, background: '#001529' } }}
    >
      <Sidebar collapsed={false} onNavigate={onClose} />
    </Drawer>
  )
}
