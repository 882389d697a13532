import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Button, Card, Form, Input, InputNumber, Modal, Popconfirm, Select, Space, Tag } from 'antd'
import ResponsiveTable from '../../components/ResponsiveTable'
import OperatorGate from './OperatorGate'
import { validated } from './validated'
import { packages, savePackage, setPackageActive } from './api'
import type { PackageRow } from './types'
import { formatFen } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'

const GRANTS = [
  { value: 'check', label: '论文查重', unit: '次' },
  { value: 'aigc', label: 'AIGC检测', unit: '次' },
  { value: 'rewrite_chars', label: '降重 / 降AIGC', unit: '字' },
  { value: 'paper', label: '论文生成', unit: '篇' },
  { value: 'ppt', label: '答辩PPT', unit: '份' },
]

interface Fields {
  name: string
  description: string
  priceYuan: number
  grantKind: string
  grantAmount: number
  validDays: number
  sortOrder: number
}

function PackageModal({ item, onClose, onSaved }: { item: PackageRow | null; onClose: () => void; onSaved: () => void }) {
  const [form] = Form.useForm<Fields>()
  const [saving, setSaving] = useState(false)
  const kind = Form.useWatch('grantKind', form)
  const initial: Partial<Fields> = item
    ? { name: item.name, description: item.description, priceYuan: item.priceFen / 100, grantKind: item.grantKind, grantAmount: item.grantAmount, validDays: item.validDays, sortOrder: item.sortOrder }
    : { grantKind: 'check', validDays: 90, sortOrder: 100, description: '' }
  const submit = async () => {
    const checked = await validated(form)
    if (!checked) return
    const v = checked
    setSaving(true)
    try {
      await savePackage({ id: item?.id, name: v.name, description: v.description ?? '', priceFen: Math.round(v.priceYuan * 100), grantKind: v.grantKind, grantAmount: v.grantAmount, validDays: v.validDays, sortOrder: v.sortOrder })
      toastSuccess(item ? '套餐已修改，已售出的订单不受影响' : '套餐已上架')
      onSaved()
      onClose()
    } catch {
      // Toasted by the client.
    } finally {
      setSaving(false)
    }
  }
  const unit = GRANTS.find((g) => g.value === kind)?.unit ?? ''
  return (
    <Modal open title={item ? `修改套餐：${item.name}` : '新建套餐'} okText="保存" cancelText="取消" onOk={submit} onCancel={onClose} confirmLoading={saving} destroyOnHidden>
      <Form form={form} layout="vertical" initialValues={initial}>
        <Form.Item name="name" label="名称" rules={[{ required: true, whitespace: true, message: '请填写名称' }, { max: 30, message: '至多 30 个字' }]}>
          <Input placeholder="例如：查重 5 次" data-testid="package-name" />
        </Form.Item>
        <Form.Item name="description" label="说明" rules={[{ max: 100, message: '至多 100 个字' }]}>
          <Input placeholder="例如：毕业季特惠，90 天内有效" />
        </Form.Item>
        <Space size="large" wrap>
          <Form.Item name="grantKind" label="包含的服务" rules={[{ required: true }]}>
            <Select style={{ width: 160 }} options={GRANTS.map((g) => ({ value: g.value, label: g.label }))} />
          </Form.Item>
          <Form.Item name="grantAmount" label={`数量（${unit}）`} rules={[{ required: true, message: '请填写数量' }, { type: 'number', min: 1, max: 10000000, message: '须为 1–10000000' }]}>
            <InputNumber precision={0} style={{ width: 140 }} data-testid="package-amount" />
          </Form.Item>
        </Space>
        <Space size="large" wrap>
          <Form.Item name="priceYuan" label="价格（元）" rules={[{ required: true, message: '请填写价格' }, { type: 'number', min: 0.01, max: 10000, message: '0.01–10000 元' }]}>
            <InputNumber precision={2} style={{ width: 140 }} data-testid="package-price" />
          </Form.Item>
          <Form.Item name="validDays" label="有效期（天）" rules={[{ required: true, message: '请填写有效期' }, { type: 'number', min: 1, max: 3650, message: '1–3650 天' }]}>
            <InputNumber precision={0} style={{ width: 120 }} />
          </Form.Item>
          <Form.Item name="sortOrder" label="排序（小的在前）" rules={[{ type: 'number', min: 0, max: 10000, message: '0–10000' }]}>
            <InputNumber precision={0} style={{ width: 120 }} />
          </Form.Item>
        </Space>
      </Form>
    </Modal>
  )
}

function PackagesBody() {
  const client = useQueryClient()
  const { data, error, refetch, isLoading } = useQuery({ queryKey: ['admin', 'packages'], queryFn: packages })
  const [editing, setEditing] = useState<PackageRow | null | 'new'>(null)
  const refresh = () => client.invalidateQueries({ queryKey: ['admin', 'packages'] })
  const actions = (p: PackageRow) => (
    <Space size={4}>
      <Button size="small" onClick={() => setEditing(p)}>修改</Button>
      <Popconfirm
        title={p.active ? '下架后用户不能再购买它（已购买的不受影响）。' : '重新上架该套餐？'}
        okText={p.active ? '下架' : '上架'}
        cancelText="取消"
        onConfirm={async () => {
          await setPackageActive(p.id, !p.active)
          toastSuccess(p.active ? '已下架' : '已上架')
          refresh()
        }}
      >
        <Button size="small" danger={p.active}>{p.active ? '下架' : '上架'}</Button>
      </Popconfirm>
    </Space>
  )
  return (
    <Card
      title="套餐管理"
      extra={
        <Button type="primary" onClick={() => setEditing('new')} data-testid="new-package">
          新建套餐
        </Button>
      }
    >
      <p className="muted">修改或下架套餐不影响已售出的订单：用户买到的内容和有效期以购买时为准。</p>
      <ResponsiveTable<PackageRow>
        rowKey="id"
        size="small"
        loading={isLoading}
        error={error as Error | null}
        onRetry={() => refetch()}
        pagination={false}
        scroll={{ x: 820 }}
        dataSource={data ?? []}
        locale={{ emptyText: '还没有套餐' }}
        card={{
          title: (p) => p.name,
          status: (p) => (p.active ? <Tag color="green">在售</Tag> : <Tag>已下架</Tag>),
          figure: (p) => ({ label: p.grantLabel, value: formatFen(p.priceFen) }),
          meta: (p) => `有效期 ${p.validDays} 天 · 排序 ${p.sortOrder}`,
          actions: (p) => actions(p),
        }}
        cardTestId="package-row-card"
        columns={[
          { title: '名称', dataIndex: 'name' },
          { title: '包含', dataIndex: 'grantLabel', width: 150 },
          { title: '价格', dataIndex: 'priceFen', width: 100, align: 'right', render: formatFen },
          { title: '有效期', dataIndex: 'validDays', width: 90, render: (d: number) => `${d} 天` },
          { title: '排序', dataIndex: 'sortOrder', width: 70 },
          { title: '状态', dataIndex: 'active', width: 90, render: (a: boolean) => (a ? <Tag color="green">在售</Tag> : <Tag>已下架</Tag>) },
          { title: '操作', key: 'actions', width: 140, render: (_: unknown, p) => actions(p) },
        ]}
      />
      {editing !== null && <PackageModal item={editing === 'new' ? null : editing} onClose={() => setEditing(null)} onSaved={refresh} />}
    </Card>
  )
}

/** /admin/packages: the packages on sale, created, changed and retired. */
export default function ConsolePackages() {
  return (
    <OperatorGate>
      <div className="page-card">
        <PackagesBody />
      </div>
    </OperatorGate>
  )
}
