import type { ReactNode } from 'react'
import { Card, Col, Row, Tag, Typography } from 'antd'
import {
  AuditOutlined,
  CommentOutlined,
  EditOutlined,
  FileSearchOutlined,
  FileTextOutlined,
  FundProjectionScreenOutlined,
  HistoryOutlined,
  RobotOutlined,
  ScissorOutlined,
  ShoppingOutlined,
  WalletOutlined,
} from '@ant-design/icons'
import { Link } from 'react-router'
import { useRewriteEngine } from '../rewrite/EngineNotice'
import { useSiteStore } from '../../stores/site'

interface Service {
  title: string
  icon: ReactNode
  description: string
  /** The links of the card; the first is the card's main action. */
  links: { to: string; label: string }[]
  /** Uses the rewriting model: unavailable while the server has none. */
  rewrites?: boolean
  /** Not built yet: the card says so and links nowhere. */
  soon?: boolean
}

const services: Service[] = [
  {
    title: '论文查重',
    icon: <FileSearchOutlined />,
    description: '上传论文，与文献库比对文字复制比，生成可在线核验的查重报告。',
    links: [{ to: '/papercheck/check', label: '开始查重' }],
  },
  {
    title: 'AIGC检测',
    icon: <AuditOutlined />,
    description: '逐段检测疑似 AI 生成的文字，给出全文 AI 率与高风险段落。',
    links: [{ to: '/aigccheck/check', label: '开始检测' }],
  },
  {
    title: '论文降重',
    icon: <ScissorOutlined />,
    description: '逐段改写论文以降低复制比，改写前后的复制比都经实测对比。',
    links: [{ to: '/papermachinesubmit/papermachine', label: '开始降重' }],
    rewrites: true,
  },
  {
    title: '降AIGC',
    icon: <RobotOutlined />,
    description: '改写 AI 痕迹明显的段落，降低 AI 率，保留原意与专业术语。',
    links: [{ to: '/proaigcsubmit/promachine', label: '开始改写' }],
    rewrites: true,
  },
  {
    title: '段落改写',
    icon: <EditOutlined />,
    description: '粘贴一段或几段文字，按需降重或降 AI 率，逐段核对意思。',
    links: [{ to: '/cnki/cnki', label: '粘贴改写' }],
    rewrites: true,
  },
  {
    title: '对话改写',
    icon: <CommentOutlined />,
    description: '像聊天一样提出要求，逐段润色、扩写或换一种说法。',
    links: [{ to: '/nlp/machine?tab=chat', label: '开始对话' }],
    rewrites: true,
  },
  {
    title: '我的记录',
    icon: <HistoryOutlined />,
    description: '查看每次查重、检测与改写的进度、结果和报告下载。',
    links: [
      { to: '/paper/report', label: '查重记录' },
      { to: '/aigccheck/list', label: 'AIGC检测记录' },
      { to: '/papermachine/list', label: '降重记录' },
      { to: '/proaigcsubmit/list', label: '降AIGC记录' },
      { to: '/machine/list', label: '改写记录' },
    ],
  },
  {
    title: '账户中心',
    icon: <WalletOutlined />,
    description: '账户余额、免费查重次数与每一笔流水，也可在这里修改密码。',
    links: [{ to: '/order/account', label: '进入账户' }],
  },
  {
    title: '答辩PPT',
    icon: <FundProjectionScreenOutlined />,
    description: '根据论文生成答辩演示文稿（.pptx），要点摘自论文原句，每页附讲稿；六种模板，生成后可免费更换。',
    links: [
      { to: '/aippt/ppt', label: '生成PPT' },
      { to: '/aippt/list', label: 'PPT记录' },
    ],
  },
  {
    title: '论文生成',
    icon: <FileTextOutlined />,
    description: '先免费生成大纲并修改，确认后逐节写作初稿；引用均为文献库中的真实记录。',
    links: [
      { to: '/aipaper/gc', label: '生成论文' },
      { to: '/aipaper/list', label: '我的论文' },
    ],
  },
  {
    title: '优惠套餐',
    icon: <ShoppingOutlined />,
    description: '购买查重、降重与检测套餐，或为账户充值（微信支付、支付宝扫码，需本站开通在线支付）。',
    links: [
      { to: '/order/taocan', label: '优惠套餐' },
      { to: '/order/recharge', label: '账户充值' },
    ],
  },
]

/** /dashboard: our own landing page — every service with a line on what it does, and a way in. */
export default function DashboardPage() {
  const siteTitle = useSiteStore((s) => s.siteTitle)
  const engine = useRewriteEngine().data
  const rewriteNote = engine?.source === 'none' ? `暂不可用：${engine.unavailable ?? '管理员尚未配置改写模型。'}` : null

  return (
    <div className="page-card dashboard">
      <div className="dashboard-head">
        <Typography.Title level={3}>欢迎使用{siteTitle}</Typography.Title>
        <Typography.Paragraph type="secondary">论文查重、AIGC 检测与改写，一站完成。选择下面的服务开始：</Typography.Paragraph>
      </div>
      <Row gutter={[16, 16]}>
        {services.map((s) => {
          const note = s.soon ? '尚未开放，敬请期待' : s.rewrites ? rewriteNote : null
          return (
            <Col key={s.title} xs={24} sm={12} lg={8} xl={6}>
              <Card className={`service-card${s.soon ? ' soon' : ''}`} data-testid="service-card">
                <div className="service-card-title">
                  <span className="service-card-icon">{s.icon}</span>
                  <span>{s.title}</span>
                  {s.soon && <Tag>尚未开放</Tag>}
                </div>
                <div className="service-card-desc">{s.description}</div>
                {note && <div className="service-card-note">{note}</div>}
                <div className="service-card-links">
                  {s.links.map((l) => (
                    <Link key={l.to} to={l.to}>
                      {l.label}
                    </Link>
                  ))}
                </div>
              </Card>
            </Col>
          )
        })}
      </Row>
    </div>
  )
}
