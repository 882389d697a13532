//! A thesis as students write them (cover, abstract, chapters with sections, references,
//! acknowledgements), written as .docx by docio's thesis writer and read back by docio, so the
//! deck is made from what an upload really gives.

use docio::thesis::{Block, Cover, Heading, Thesis};

fn heading(level: u8, title: &str, text: &[&str]) -> Heading {
    Heading {
        level,
        title: title.into(),
        blocks: text.iter().map(|p| Block::Paragraph((*p).into())).collect(),
    }
}

pub fn thesis() -> Thesis {
    Thesis {
        cover: Cover {
            title: "基于改进YOLOv5的道路裂缝检测方法研究".into(),
            school: "华东理工学院".into(),
            major: "计算机科学与技术".into(),
            name: "李明".into(),
            student_number: "2021123456".into(),
            supervisor: "王强".into(),
            date: "2025年5月".into(),
            kind_label: "本科毕业论文".into(),
        },
        abstract_zh: "道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。本文针对人工巡检效率低、传统图像处理方法鲁棒性差的问题，提出一种基于改进YOLOv5的道路裂缝检测方法。该方法在主干网络中引入坐标注意力机制，并采用加权双向特征金字塔融合多尺度特征。在自建的3200张道路图像数据集上，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点，检测速度为每秒58帧。".into(),
        keywords_zh: vec!["裂缝检测".into(), "YOLOv5".into(), "注意力机制".into()],
        abstract_en: "Road cracks are early signs of pavement distress.".into(),
        keywords_en: vec!["crack detection".into()],
        body: vec![
            heading(1, "绪论", &[]),
            heading(2, "研究背景", &[
                "截至2023年底，我国公路总里程已超过540万公里，道路养护任务日益繁重。",
                "裂缝是沥青路面和水泥路面最常见的病害形式，若不及时处理，雨水渗入会导致基层损坏，进而引发坑槽等更严重的病害。传统的人工巡检依赖养护人员目测，效率低且存在安全隐患。",
            ]),
            heading(2, "研究意义", &[
                "自动化的裂缝检测能够降低巡检成本，提高病害发现的及时性。本研究旨在构建一种精度高、速度快的裂缝检测模型，为道路养护决策提供数据支持。",
            ]),
            heading(2, "国内外研究现状", &[
                "早期的裂缝检测主要采用阈值分割、边缘检测等传统图像处理方法，这类方法对光照和阴影较为敏感。",
                "近年来，基于深度学习的目标检测方法得到广泛应用。两阶段检测器精度较高但速度较慢，单阶段检测器如YOLO系列在速度和精度之间取得了较好的平衡。现有研究表明，注意力机制能够提升模型对细长目标的感知能力。",
            ]),
            heading(1, "相关理论与技术", &[]),
            heading(2, "YOLOv5网络结构", &[
                "YOLOv5由输入端、主干网络、颈部网络和检测头四部分组成。主干网络采用CSPDarknet提取特征，颈部网络采用特征金字塔与路径聚合结构融合多尺度特征。",
            ]),
            heading(2, "注意力机制", &[
                "坐标注意力机制将通道注意力分解为两个方向的一维特征编码，在捕获通道关系的同时保留精确的位置信息，适合检测细长的裂缝目标。",
            ]),
            heading(1, "改进的裂缝检测模型设计", &[]),
            heading(2, "总体框架", &[
                "本文提出的模型以YOLOv5s为基础，主要包括三处改进：在主干网络末端引入坐标注意力模块，以加权双向特征金字塔替换原有的颈部结构，并采用SIoU损失函数优化边界框回归。",
            ]),
            heading(2, "数据集构建", &[
                "本文使用车载相机在城市道路采集图像，经筛选共得到3200张包含裂缝的图像，按照8:1:1的比例划分为训练集、验证集和测试集。裂缝分为横向裂缝、纵向裂缝和龟裂三类，由两名标注人员交叉检查标注结果。",
            ]),
            heading(2, "训练策略", &[
                "模型训练采用随机梯度下降优化器，初始学习率为0.01，批大小为16，共训练300轮。训练过程中采用Mosaic数据增强以提高模型的泛化能力。",
            ]),
            heading(1, "实验结果与分析", &[]),
            heading(2, "评价指标", &[
                "本文采用精确率、召回率和平均精度均值作为评价指标，并以每秒处理帧数衡量检测速度。",
            ]),
            Heading {
                level: 2,
                title: "对比实验".into(),
                blocks: vec![
                    Block::Paragraph("实验结果表明，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点。与Faster R-CNN相比，改进模型的精度相当，但检测速度提高了约3倍。各模型的结果如表1所示。".into()),
                    Block::Table {
                        caption: "各模型检测结果对比".into(),
                        header: vec!["模型".into(), "精确率/%".into(), "召回率/%".into(), "mAP/%".into(), "速度/(帧/秒)".into()],
                        rows: vec![
                            vec!["Faster R-CNN".into(), "84.1".into(), "80.3".into(), "85.9".into(), "19".into()],
                            vec!["YOLOv5s".into(), "82.6".into(), "78.4".into(), "81.7".into(), "62".into()],
                            vec!["本文方法".into(), "87.9".into(), "83.5".into(), "86.4".into(), "58".into()],
                        ],
                    },
                    Block::Paragraph("在三类裂缝中，龟裂的检测精度最高，为89.2%；横向裂缝由于目标细长，检测精度相对较低，为82.5%。图1给出了改进模型在城市道路图像上的检测结果示例。".into()),
                    Block::Figure {
                        caption: "改进模型的裂缝检测结果示例".into(),
                        image: slides::pptx::badge_png(480, 270),
                        width: 480,
                        height: 270,
                    },
                ],
            },
            heading(2, "消融实验", &[
                "消融实验表明，坐标注意力模块使平均精度均值提高2.1个百分点，加权双向特征金字塔提高1.9个百分点，SIoU损失函数提高0.7个百分点，三项改进均对模型性能有正向贡献。",
            ]),
            heading(1, "总结与展望", &[
                "本文提出了一种基于改进YOLOv5的道路裂缝检测方法，在自建数据集上取得了较好的检测效果，能够满足道路巡检的实时性要求。",
                "本研究仍存在不足：数据集主要采集于晴天条件，模型在雨天和夜间场景下的表现有待验证。未来将扩充不同天气条件下的样本，并探索模型在嵌入式设备上的部署。",
            ]),
        ],
        references: vec!["张三, 李四. 基于深度学习的路面裂缝检测综述[J]. 中国公路学报, 2021, 34(2): 1-20.".into()],
        acknowledgements: "感谢王强老师的悉心指导。".into(),
        short_form: false,
    }
}

/// The thesis as an uploaded .docx reads, its pictures included.
pub fn extracted() -> docio::Extracted {
    let bytes = docio::thesis::write_thesis_docx(&thesis()).expect("thesis .docx");
    let limits = docio::Limits {
        image_bytes: 10 << 20,
        ..docio::Limits::default()
    };
    docio::extract(&bytes, "thesis.docx", &limits).expect("read back")
}
