import { Dropdown, Tooltip } from 'antd'
import { FontSizeOutlined } from '@ant-design/icons'
import { useAppStore, type UiSize } from '../stores/app'
import { toastSuccess } from '../utils/feedback'
import { zhCN } from '../locales/zh-CN'

const order: UiSize[] = ['default', 'medium', 'small', 'mini']

export default function SizeSelect() {
  const { size, setSize } = useAppStore()
  return (
    <Dropdown
      trigger={['click']}
      menu={{
        selectable: true,
        selectedKeys: [size],
        items: order.map((s) => ({ key: s, label: zhCN.sizes[s] })),
        onClick: ({ key }) => {
          setSize(key as UiSize)
          toastSuccess('界面尺寸已切换')
        },
      }}
    >
      <Tooltip title="界面尺寸">
        <FontSizeOutlined className="navbar-icon" aria-label="界面尺寸" />
      </Tooltip>
    </Dropdown>
  )
}
