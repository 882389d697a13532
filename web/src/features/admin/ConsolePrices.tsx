import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Alert, Button, Card, Col, Empty, Form, InputNumber, Popconfirm, Row, Space } from 'antd'
import { MinusCircleOutlined, PlusOutlined } from '@ant-design/icons'
import OperatorGate from './OperatorGate'
import { validated } from './validated'
import { prices as loadPrices, resetPrices, savePrices } from './api'
import type { Prices, PricesView } from './types'
import { formatDateTime, formatFen } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'

/** The form works in yuan; the server in fen. */
interface Fields {
  check: number
  aigc: number
  rewrite: number
  chat: number
  ppt: number
  paperTiers: { words: number; yuan: number }[]
  topUpTiers: { yuan: number; bonusYuan: number }[]
}

const yuan = (fen: number) => fen / 100
const fen = (y: number) => Math.round((y ?? 0) * 100)

function toFields(p: Prices): Fields {
  return {
    check: yuan(p.checkFenPerThousand),
    aigc: yuan(p.aigcFenPerThousand),
    rewrite: yuan(p.rewriteFenPerThousand),
    chat: yuan(p.chatFenPerThousand),
    ppt: yuan(p.pptFen),
    paperTiers: p.paperTiers.map((t) => ({ words: t.words, yuan: yuan(t.fen) })),
    topUpTiers: p.topUpTiers.map((t) => ({ yuan: yuan(t.fen), bonusYuan: yuan(t.bonusFen) })),
  }
}

function toPrices(f: Fields): Prices {
  return {
    checkFenPerThousand: fen(f.check),
    aigcFenPerThousand: fen(f.aigc),
    rewriteFenPerThousand: fen(f.rewrite),
    chatFenPerThousand: fen(f.chat),
    pptFen: fen(f.ppt),
    paperTiers: (f.paperTiers ?? []).map((t) => ({ words: t.words, fen: fen(t.yuan) })),
    topUpTiers: (f.topUpTiers ?? []).map((t) => ({ fen: fen(t.yuan), bonusFen: fen(t.bonusYuan) })),
  }
}

const PER_THOUSAND: { name: keyof Fields; label: string }[] = [
  { name: 'check', label: '论文查重（元 / 千字）' },
  { name: 'aigc', label: 'AIGC检测（元 / 千字）' },
  { name: 'rewrite', label: '降重 / 降AIGC（元 / 千字）' },
  { name: 'chat', label: '对话改写（元 / 千字）' },
]

function PricesForm({ view }: { view: PricesView }) {
  const client = useQueryClient()
  const [form] = Form.useForm<Fields>()
  const [saving, setSaving] = useState(false)
  const done = (next: PricesView, message: string) => {
    client.setQueryData(['admin', 'prices'], next)
    form.setFieldsValue(toFields(next.current))
    toastSuccess(message)
  }
  const save = async () => {
    const checked = await validated(form)
    if (!checked) return
    const fields = checked
    setSaving(true)
    try {
      done(await savePrices(toPrices(fields)), '价格已保存：之后的每一次报价都按新价格计算')
    } catch {
      // Toasted by the client; the form keeps what was typed.
    } finally {
      setSaving(false)
    }
  }
  const money = { precision: 2, style: { width: '100%' } }
  const yuanRule = (max: number) => ({ type: 'number' as const, min: 0.01, max, message: `须在 0.01–${max} 元之间` })
  return (
    <Form form={form} layout="vertical" initialValues={toFields(view.current)}>
      <Alert
        type={view.overridden ? 'info' : 'success'}
        showIcon
        className="mb"
        message={view.overridden ? `当前使用后台设置的价格（${view.updatedAt ? formatDateTime(view.updatedAt) : ''} 修改）` : '当前使用配置文件中的价格'}
        description="保存后立即用于所有新的报价与扣费；已支付的任务按支付时的价格，不受影响。"
      />
      <Card size="small" title="按字数计费" className="mb">
        <Row gutter={16}>
          {PER_THOUSAND.map((p) => (
            <Col xs={12} md={6} key={p.name}>
              <Form.Item name={p.name} label={p.label} rules={[{ required: true, message: '请填写价格' }, yuanRule(1000)]}>
                <InputNumber {...money} data-testid={`price-${p.name}`} />
              </Form.Item>
            </Col>
          ))}
          <Col xs={12} md={6}>
            <Form.Item name="ppt" label="答辩PPT（元 / 份）" rules={[{ required: true, message: '请填写价格' }, yuanRule(10000)]}>
              <InputNumber {...money} />
            </Form.Item>
          </Col>
        </Row>
      </Card>
      <Row gutter={16}>
        <Col xs={24} lg={12}>
          <Card size="small" title="论文生成（按篇幅）" className="mb">
            <p className="muted">每一档也是学生可选的论文字数（1000–50000 字，最长一档须为 50000 字）；按“不少于所选字数的第一档”计价。</p>
            <Form.List name="paperTiers">
              {(fields, { add, remove }) => (
                <>
                  {fields.map((field) => (
                    <Space key={field.key} align="baseline" wrap style={{ display: 'flex' }}>
                      <Form.Item name={[field.name, 'words']} label="不超过（字）" rules={[{ required: true, message: '请填写字数' }, { type: 'number', min: 1000, max: 50000, message: '1000–50000 字' }]}>
                        <InputNumber precision={0} />
                      </Form.Item>
                      <Form.Item name={[field.name, 'yuan']} label="价格（元）" rules={[{ required: true, message: '请填写价格' }, yuanRule(10000)]}>
                        <InputNumber precision={2} />
                      </Form.Item>
                      {fields.length > 1 && <MinusCircleOutlined onClick={() => remove(field.name)} aria-label="删除该档" />}
                    </Space>
                  ))}
                  <Button type="dashed" onClick={() => add({ words: 10000, yuan: 50 })} icon={<PlusOutlined />} disabled={fields.length >= 12}>
                    增加一档
                  </Button>
                </>
              )}
            </Form.List>
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card size="small" title="充值档位与赠送" className="mb">
            <p className="muted">
              充值金额须在 {formatFen(view.topUpMinFen)}–{formatFen(view.topUpMaxFen)} 之间；赠送不超过充值金额。自定义金额不赠送。
            </p>
            <Form.List name="topUpTiers">
              {(fields, { add, remove }) => (
                <>
                  {fields.map((field) => (
                    <Space key={field.key} align="baseline" wrap style={{ display: 'flex' }}>
                      <Form.Item name={[field.name, 'yuan']} label="充值（元）" rules={[{ required: true, message: '请填写金额' }, { type: 'number', min: view.topUpMinFen / 100, max: view.topUpMaxFen / 100, message: `须在 ${view.topUpMinFen / 100}–${view.topUpMaxFen / 100} 元之间` }]}>
                        <InputNumber precision={2} data-testid="top-up-yuan" />
                      </Form.Item>
                      <Form.Item name={[field.name, 'bonusYuan']} label="赠送（元）" rules={[{ required: true, message: '请填写赠送，没有则填 0' }, { type: 'number', min: 0, message: '赠送不能为负' }]}>
                        <InputNumber precision={2} data-testid="top-up-bonus" />
                      </Form.Item>
                      <MinusCircleOutlined onClick={() => remove(field.name)} aria-label="删除该档" />
                    </Space>
                  ))}
                  <Button type="dashed" onClick={() => add({ yuan: 100, bonusYuan: 0 })} icon={<PlusOutlined />} disabled={fields.length >= 12} data-testid="add-top-up">
                    增加档位
                  </Button>
                </>
              )}
            </Form.List>
          </Card>
        </Col>
      </Row>
      <Space>
        <Button type="primary" onClick={save} loading={saving} data-testid="save-prices">
          保存价格
        </Button>
        <Popconfirm
          title="恢复为配置文件中的价格？"
          okText="恢复"
          cancelText="取消"
          disabled={!view.overridden}
          onConfirm={async () => done(await resetPrices(), '已恢复为配置文件中的价格')}
        >
          <Button disabled={!view.overridden}>恢复配置文件价格</Button>
        </Popconfirm>
      </Space>
    </Form>
  )
}

function PricesBody() {
  const { data, error, refetch } = useQuery({ queryKey: ['admin', 'prices'], queryFn: loadPrices })
  return (
    <Card title="价格设置">
      {error ? (
        <Empty description={`加载失败：${(error as Error).message}`}>
          <Button onClick={() => refetch()}>重试</Button>
        </Empty>
      ) : data ? (
        <PricesForm view={data} />
      ) : (
        <Card loading variant="borderless" />
      )}
    </Card>
  )
}

/** /admin/prices: what each service costs and the top-up bonuses, applied to the next quote. */
export default function ConsolePrices() {
  return (
    <OperatorGate>
      <div className="page-card">
        <PricesBody />
      </div>
    </OperatorGate>
  )
}
