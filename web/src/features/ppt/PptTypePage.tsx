import { useEffect, useState } from 'react'
import { Alert, Button, Card, Col, Descriptions, Empty, Row, Spin } from 'antd'
import { CheckCircleFilled } from '@ant-design/icons'
import { useQuery } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { pptLoad, pptSubmit, pptTemplates, pptSubmission } from './api'
import SlideImage from './SlideImage'
import { formatFen } from '../../utils/format'
import { PackageNotice, confirmedPayment, payAsShown, paysWithText } from '../order/paysWith'
import ScanToPay from '../order/ScanToPay'
import { useSubmit } from '../../utils/useSubmit'

const SOURCE_LABEL: Record<string, string> = { upload: '上传的论文', paper: '本站生成的论文', check: '本站查重的论文', outline: '填写的提纲' }

/** /aippt/ppttype/:id — choose a template (thumbnails drawn from each), see the price, pay and generate. */
export default function PptTypePage() {
  const id = Number(useParams().id)
  const navigate = useNavigate()
  const detail = useQuery({ queryKey: ['ppt-detail', id], queryFn: () => pptLoad(id), enabled: id > 0, staleTime: 0 })
  const templates = useQuery({ queryKey: ['ppt-templates'], queryFn: pptTemplates, staleTime: 600_000 })
  const [chosen, setChosen] = useState<string | null>(null)
  const record = detail.data?.record
  useEffect(() => {
    if (!record || chosen !== null || !templates.data) return
    // The draft's template, unless an operator switched it off meanwhile: then the first offered.
    const offered = templates.data.some((t) => t.id === record.template)
    setChosen(offered ? record.template : (templates.data[0]?.id ?? record.template))
  }, [record, chosen, templates.data])
  const [paying, pay] = useSubmit(async () => {
    const cost = detail.data?.cost
    if (!cost || !chosen) return
    await payAsShown(() => pptSubmit(id, chosen, confirmedPayment(cost)), () => detail.refetch())
    navigate('/aippt/list')
  })

  if (detail.isLoading || templates.isLoading) return <Spin className="page-card" />
  if (detail.error || !record) {
    return (
      <div className="page-card">
        <Card>
          <Empty description={detail.error?.message ?? '记录不存在'}>
            <Button onClick={() => navigate('/aippt/ppt')}>重新开始</Button>
          </Empty>
        </Card>
      </div>
    )
  }
  if (record.status !== 'pending') {
    return (
      <div className="page-card">
        <Card>
          <Empty description="这份 PPT 已提交生成">
            <Button type="primary" onClick={() => navigate('/aippt/list')}>查看PPT记录</Button>
          </Empty>
        </Card>
      </div>
    )
  }
  const cost = detail.data?.cost
  return (
    <div className="page-card">
      <Card title="选择模板并生成" extra={<Button type="link" onClick={() => navigate(`/aippt/ppt?draft=${id}`)}>返回修改</Button>}>
        <Descriptions size="small" column={{ xs: 1, md: 3 }} className="mb" bordered styles={{ label: { whiteSpace: 'nowrap' } }}>
          <Descriptions.Item label="标题">{record.title}</Descriptions.Item>
          <Descriptions.Item label="来源">{SOURCE_LABEL[record.source] ?? record.source}{record.fileName ? `（${record.fileName}）` : ''}</Descriptions.Item>
          <Descriptions.Item label="读到的章节">{record.sections} 个标题 · {record.chars.toLocaleString('zh-CN')} 字</Descriptions.Item>
          <Descriptions.Item label="类型">{record.kindLabel}</Descriptions.Item>
          <Descriptions.Item label="页数">
            <span data-testid="ppt-planned">
              {record.planned != null && record.planned < record.slides
                ? `选 ${record.slides} 页，您的论文内容可生成 ${record.planned} 页（不凑页）`
                : `${record.planned ?? record.slides} 页`}
            </span>
          </Descriptions.Item>
          <Descriptions.Item label="封面">{[record.school, record.presenter && `答辩人 ${record.presenter}`, record.supervisor && `指导教师 ${record.supervisor}`, record.date].filter(Boolean).join(' · ') || '未填写'}{record.hasLogo ? ' · 含校徽' : ''}</Descriptions.Item>
        </Descriptions>
        <div className="ppt-choose">
          <Row gutter={[16, 16]} data-testid="ppt-templates">
            {(templates.data ?? []).map((t) => {
              const selected = t.id === chosen
              return (
                <Col xs={24} sm={12} lg={8} key={t.id}>
                  <Card
                    hoverable
                    size="small"
                    onClick={() => setChosen(t.id)}
                    style={{ borderColor: selected ? t.primary : undefined, borderWidth: selected ? 2 : 1 }}
                    data-testid={`template-${t.id}`}
                    title={
                      <span>
                        {t.name} {selected && <CheckCircleFilled style={{ color: t.primary }} />}
                      </span>
                    }
                  >
                    <div style={{ display: 'grid', gridTemplateColumns: '1fr 1fr', gap: 6 }}>
                      {t.thumbnails.map((svg, i) => (
                        <SlideImage key={i} svg={svg} picture={t.pictures[i]} alt={`${t.name}模板示例第${i + 1}页`} />
                      ))}
                    </div>
                    <div className="muted mt">{t.description}</div>
                  </Card>
                </Col>
              )
            })}
          </Row>
          {detail.data?.method && <Alert className="mt" type="info" showIcon title="内容如何生成" description={detail.data.method} />}
          {cost && (
            <Card size="small" className="mt ppt-fee" title="费用">
              <Descriptions column={1} size="small">
                <Descriptions.Item label="模板">{templates.data?.find((t) => t.id === chosen)?.name ?? chosen}</Descriptions.Item>
                <Descriptions.Item label="价格">
                  <span data-testid="ppt-price">{formatFen(cost.priceFen)}</span>
                </Descriptions.Item>
                <Descriptions.Item label="支付方式">
                  <span data-testid="pays-with">{paysWithText(cost)}</span>
                </Descriptions.Item>
                <Descriptions.Item label="账户余额">{formatFen(cost.balanceFen)}</Descriptions.Item>
              </Descriptions>
              <div className="muted">{cost.rule}；生成失败自动退款。</div>
              <PackageNotice cost={cost} />
              {cost.paysWith === 'insufficient' && (
                <>
                  <Alert className="mt" type="warning" showIcon title="余额不足，无法提交" action={<Button size="small" onClick={() => navigate('/order/recharge')}>去充值</Button>} />
                  <ScanToPay taskId={id} shortFen={cost.priceFen - cost.balanceFen} onPaid={() => void pay(undefined)} submit={chosen ? pptSubmission(id, chosen) : undefined} priceFen={cost.priceFen} />
                </>
              )}
              <Button
                className="mt"
                type="primary"
                size="large"
                loading={paying}
                disabled={!chosen || cost.paysWith === 'insufficient'}
                onClick={() => void pay(undefined)}
                data-testid="ppt-pay"
              >
                确认支付并生成
              </Button>
            </Card>
          )}
        </div>
      </Card>
    </div>
  )
}
