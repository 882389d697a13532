import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Alert, Button, Card, Empty, Form, Input, Modal, Popconfirm, Radio, Select, Space, Switch, Tag } from 'antd'
import ResponsiveTable from '../../components/ResponsiveTable'
import OperatorGate from './OperatorGate'
import { validated } from './validated'
import { configEntries, deleteConfig, saveConfig } from './api'
import type { ConfigItem, Notice } from './types'
import { allPages } from '../../router/routes'
import { formatDateTime } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'
import { useSiteStore } from '../../stores/site'
import { paymentOptions } from '../order/api'
import { channelLabels, type Channel } from '../order/types'

const LEVELS: { value: Notice['level']; label: string; color: string }[] = [
  { value: 'info', label: '通知', color: 'blue' },
  { value: 'warning', label: '提醒', color: 'orange' },
  { value: 'success', label: '喜讯', color: 'green' },
]

/** Pages a notice can be shown on: every page of the menu (detail pages have no fixed path). */
const PAGE_OPTIONS = allPages.filter((p) => !p.path.includes(':')).map((p) => ({ value: p.path, label: `${p.meta.title}（${p.path}）` }))
const pageTitle = (path: string) => allPages.find((p) => p.path === path)?.meta.title ?? path

function SiteTexts() {
  const client = useQueryClient()
  const loadSite = useSiteStore((s) => s.load)
  const { data, error, refetch } = useQuery({ queryKey: ['admin', 'config', 'site_texts'], queryFn: () => configEntries<string>('site_texts') })
  const [form] = Form.useForm<{ site_title: string; marketing_url: string }>()
  const [saving, setSaving] = useState(false)
  if (error) {
    return (
      <Empty description={`加载失败：${(error as Error).message}`}>
        <Button onClick={() => refetch()}>重试</Button>
      </Empty>
    )
  }
  if (!data) return <Card loading variant="borderless" />
  const initial = Object.fromEntries(data.map((i) => [i.id, i.value]))
  const overridden = data.some((i) => i.updatedAt !== null)
  const save = async () => {
    const checked = await validated(form)
    if (!checked) return
    const values = checked
    setSaving(true)
    try {
      for (const id of ['site_title', 'marketing_url'] as const) {
        if ((values[id] ?? '') !== (initial[id] ?? '')) await saveConfig('site_texts', id, values[id] ?? '')
      }
      toastSuccess('已保存，所有用户刷新页面后即可看到')
      await client.invalidateQueries({ queryKey: ['admin', 'config', 'site_texts'] })
      await loadSite()
    } catch {
      // Toasted by the client.
    } finally {
      setSaving(false)
    }
  }
  return (
    // Keyed by the values kept, so a reset shows the configuration file's at once.
    <Form key={JSON.stringify(initial)} form={form} layout="vertical" initialValues={initial} style={{ maxWidth: 560 }}>
      <Form.Item name="site_title" label="站点名称" rules={[{ required: true, whitespace: true, message: '站点名称不能为空' }, { max: 30, message: '至多 30 个字' }]}>
        <Input data-testid="site-title" />
      </Form.Item>
      <Form.Item
        name="marketing_url"
        label="“首页”链接"
        extra="顶部菜单“首页”打开的网址；留空则打开本站的服务首页。"
        rules={[{ pattern: /^(https?:\/\/\S+)?$/, message: '须以 http:// 或 https:// 开头' }, { max: 200, message: '至多 200 个字符' }]}
      >
        <Input placeholder="https://" />
      </Form.Item>
      <Space>
        <Button type="primary" onClick={save} loading={saving} data-testid="save-site">
          保存
        </Button>
        <Popconfirm
          title="站点名称与首页链接恢复为配置文件中的值？"
          okText="恢复"
          cancelText="取消"
          disabled={!overridden}
          onConfirm={async () => {
            for (const item of data.filter((i) => i.updatedAt !== null)) await deleteConfig('site_texts', item.id)
            toastSuccess('已恢复为配置文件中的值')
            await client.invalidateQueries({ queryKey: ['admin', 'config', 'site_texts'] })
            await loadSite()
          }}
        >
          <Button disabled={!overridden}>恢复配置文件的值</Button>
        </Popconfirm>
      </Space>
    </Form>
  )
}

interface NoticeForm extends Notice {
  id: string
}

function NoticeModal({ item, onClose, onSaved }: { item: ConfigItem<Notice> | null; onClose: () => void; onSaved: () => void }) {
  const [form] = Form.useForm<NoticeForm>()
  const [saving, setSaving] = useState(false)
  const initial: NoticeForm = item ? { id: item.id, ...item.value } : { id: `notice-${Date.now().toString(36)}`, title: '', content: '', level: 'info', pages: [], enabled: true }
  const submit = async () => {
    const checked = await validated(form)
    if (!checked) return
    const { id, ...notice } = checked
    setSaving(true)
    try {
      await saveConfig('notices', id, { ...notice, pages: notice.pages ?? [] })
      toastSuccess('公告已保存，立即生效')
      onSaved()
      onClose()
    } catch {
      // Toasted by the client.
    } finally {
      setSaving(false)
    }
  }
  return (
    <Modal open width={620} title={item ? '编辑公告' : '新建公告'} okText="保存" cancelText="取消" onOk={submit} onCancel={onClose} confirmLoading={saving} destroyOnHidden>
      <Form form={form} layout="vertical" initialValues={initial}>
        <Form.Item name="id" hidden>
          <Input />
        </Form.Item>
        <Form.Item name="title" label="标题" rules={[{ required: true, whitespace: true, message: '请填写标题' }, { max: 40, message: '至多 40 个字' }]}>
          <Input data-testid="notice-title" />
        </Form.Item>
        <Form.Item name="content" label="内容" rules={[{ required: true, whitespace: true, message: '请填写内容' }, { max: 500, message: '至多 500 个字' }]}>
          <Input.TextArea rows={3} showCount maxLength={500} data-testid="notice-content" />
        </Form.Item>
        <Form.Item name="level" label="样式">
          <Radio.Group optionType="button" options={LEVELS.map((l) => ({ value: l.value, label: l.label }))} />
        </Form.Item>
        <Form.Item name="pages" label="显示在哪些页面" extra="不选则显示在所有页面。">
          <Select mode="multiple" allowClear options={PAGE_OPTIONS} placeholder="所有页面" optionFilterProp="label" data-testid="notice-pages" />
        </Form.Item>
        <Form.Item name="enabled" label="启用" valuePropName="checked">
          <Switch />
        </Form.Item>
      </Form>
    </Modal>
  )
}

function Notices() {
  const client = useQueryClient()
  const { data, error, refetch, isLoading } = useQuery({ queryKey: ['admin', 'config', 'notices'], queryFn: () => configEntries<Notice>('notices') })
  const [editing, setEditing] = useState<ConfigItem<Notice> | null | 'new'>(null)
  const refresh = () => {
    client.invalidateQueries({ queryKey: ['admin', 'config', 'notices'] })
    client.invalidateQueries({ queryKey: ['notices'] })
  }
  const level = (n: ConfigItem<Notice>) => LEVELS.find((l) => l.value === n.value.level)
  const levelTag = (n: ConfigItem<Notice>) => <Tag color={level(n)?.color}>{level(n)?.label}</Tag>
  const enabledTag = (n: ConfigItem<Notice>) => (n.value.enabled ? <Tag color="green">显示中</Tag> : <Tag>已关闭</Tag>)
  const pagesOf = (n: ConfigItem<Notice>) => (n.value.pages.length === 0 ? '所有页面' : n.value.pages.map(pageTitle).join('、'))
  const actions = (n: ConfigItem<Notice>) => (
    <Space size={4}>
      <Button size="small" onClick={() => setEditing(n)}>编辑</Button>
      <Popconfirm
        title="删除这条公告？"
        okText="删除"
        cancelText="取消"
        onConfirm={async () => {
          await deleteConfig('notices', n.id)
          toastSuccess('已删除')
          refresh()
        }}
      >
        <Button size="small" danger>删除</Button>
      </Popconfirm>
    </Space>
  )
  return (
    <>
      <Button type="primary" onClick={() => setEditing('new')} className="mb" data-testid="new-notice">
        新建公告
      </Button>
      <ResponsiveTable<ConfigItem<Notice>>
        rowKey="id"
        size="small"
        loading={isLoading}
        error={error as Error | null}
        onRetry={() => refetch()}
        pagination={false}
        scroll={{ x: 760 }}
        dataSource={data ?? []}
        locale={{ emptyText: '还没有公告' }}
        card={{
          title: (n) => n.value.title,
          status: (n) => enabledTag(n),
          meta: (n) => `${level(n)?.label ?? ''} · ${pagesOf(n)}`,
          actions: (n) => actions(n),
        }}
        cardTestId="notice-card"
        columns={[
          { title: '标题', key: 'title', render: (_: unknown, n) => <span>{levelTag(n)}{n.value.title}</span> },
          { title: '内容', key: 'content', ellipsis: true, render: (_: unknown, n) => n.value.content },
          { title: '页面', key: 'pages', width: 180, render: (_: unknown, n) => pagesOf(n) },
          { title: '状态', key: 'enabled', width: 80, render: (_: unknown, n) => enabledTag(n) },
          { title: '更新', dataIndex: 'updatedAt', width: 150, render: (v: number | null) => (v ? formatDateTime(v) : '—') },
          { title: '操作', key: 'actions', width: 130, render: (_: unknown, n) => actions(n) },
        ]}
      />
      {editing !== null && <NoticeModal item={editing === 'new' ? null : editing} onClose={() => setEditing(null)} onSaved={refresh} />}
    </>
  )
}

interface Switchable {
  name: string
  /** A template's description. */
  description?: string
  /** A paper option's group: `kind` or `degree`. */
  group?: 'kind' | 'degree'
  enabled: boolean
}

const GROUP_LABELS: Record<string, string> = { kind: '论文类型', degree: '学历层次' }

/**
 * Options switched on or off (deck templates, paper kinds and degree levels): one switched off is
 * not offered to students, and at least one of each stays on.
 */
function Switches({ entity, offNote }: { entity: 'slide_templates' | 'paper_options'; offNote: string }) {
  const client = useQueryClient()
  const { data, error, refetch } = useQuery({ queryKey: ['admin', 'config', entity], queryFn: () => configEntries<Switchable>(entity) })
  const [busy, setBusy] = useState<string | null>(null)
  if (error) {
    return (
      <Empty description={`加载失败：${(error as Error).message}`}>
        <Button onClick={() => refetch()}>重试</Button>
      </Empty>
    )
  }
  if (!data) return <Card loading variant="borderless" />
  const toggle = async (id: string, enabled: boolean) => {
    setBusy(id)
    try {
      await saveConfig(entity, id, { enabled })
      toastSuccess(enabled ? '已启用' : offNote)
      await client.invalidateQueries({ queryKey: ['admin', 'config', entity] })
    } catch {
      // Toasted by the client.
    } finally {
      setBusy(null)
    }
  }
  return (
    <div className="template-switches">
      {data.map((t) => (
        <div key={t.id} className="template-switch" data-testid={`${entity === 'slide_templates' ? 'template' : 'paper-option'}-${t.id}`}>
          <Switch checked={t.value.enabled} loading={busy === t.id} onChange={(on) => toggle(t.id, on)} />
          <span className="template-name">{t.value.name}</span>
          <span className="muted">{t.value.description ?? GROUP_LABELS[t.value.group ?? ''] ?? ''}</span>
        </div>
      ))}
    </div>
  )
}

/** How students can pay here: set in the configuration file (keys and certificates belong there). */
function Payments() {
  const { data, error } = useQuery({ queryKey: ['admin', 'payment-options'], queryFn: paymentOptions })
  if (error) return <Alert type="error" showIcon message={`加载失败：${(error as Error).message}`} />
  if (!data) return <Card loading variant="borderless" />
  return (
    <>
      {data.sandbox ? (
        <Alert type="warning" showIcon message="支付沙箱模式" description="订单由本机附带的模拟器按微信支付、支付宝的真实协议“支付”，不会有真实资金到账；每个支付页面都显示沙箱提示。" data-testid="payment-mode" />
      ) : data.unavailable ? (
        <Alert type="info" showIcon message="未开通在线支付" description={data.unavailable} data-testid="payment-mode" />
      ) : (
        <Alert type="success" showIcon message={`在线支付已开通：${data.channels.map((c) => channelLabels[c as Channel] ?? c).join('、')}`} data-testid="payment-mode" />
      )}
      <p className="muted mt">支付方式在配置文件中设置（payment 以及商户号、密钥与证书路径），修改后重启服务生效；密钥不会出现在后台页面上。</p>
    </>
  )
}

/** /admin/site: the site's name and 首页 link, notices shown on chosen pages, how payments run. */
export default function ConsoleSite() {
  return (
    <OperatorGate>
      <div className="page-card">
        <Alert type="info" showIcon className="mb" message="这里的修改保存后立即对所有用户生效，无需重启服务；每次修改都会记入操作日志。" />
        <Card title="公告" className="mb">
          <Notices />
        </Card>
        <Card title="站点信息" className="mb">
          <SiteTexts />
        </Card>
        <Card title="答辩PPT模板" className="mb">
          <Switches entity="slide_templates" offNote="模板已停用，学生不会再看到它" />
        </Card>
        <Card title="论文生成选项" className="mb">
          <Switches entity="paper_options" offNote="已停用，学生不会再看到这个选项" />
          <p className="muted mt">停用的论文类型或学历层次不再出现在论文生成页，提交时也会被拒绝；每组至少保留一项。</p>
        </Card>
        <Card title="在线支付">
          <Payments />
        </Card>
      </div>
    </OperatorGate>
  )
}
